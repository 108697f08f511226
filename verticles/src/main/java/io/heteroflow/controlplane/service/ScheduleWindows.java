package io.heteroflow.controlplane.service;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The schedule windows of an inference service (SPEC §9): a weekly calendar of open intervals in one time zone,
 * and the action ({@code pause} / {@code scale} / {@code stop}) that runs outside every open interval.
 *
 * <p>An interval listed for day D opens at D {@code from} (local time). It closes at D {@code to} when
 * {@code to > from}; at the end of day D (the start of D+1) for {@code "24:00"}; and at D+1 {@code to} when
 * {@code to <= from} (it crosses midnight, e.g. 20:00–08:00). Intervals are start-inclusive, end-exclusive.
 *
 * <p>Local times become instants by {@link ZonedDateTime#of(LocalDate, LocalTime, ZoneId)}: a time in a DST gap
 * moves forward by the length of the gap (02:30 on a spring-forward day in New York is 03:30 EDT), and an
 * ambiguous time in a DST overlap takes the earlier offset (01:30 on a fall-back day in New York is 01:30 EDT,
 * i.e. the first 01:30). The end of a day is {@link LocalDate#atStartOfDay(ZoneId)} of the next day. An
 * occurrence that DST makes empty (end not after start) is ignored.
 */
public record ScheduleWindows(ZoneId timezone, List<Interval> open, Action action, Integer scaleTo) {
  /** How far {@link #nextEdge} looks ahead: more than a week, so a weekly calendar shows every edge it has. */
  public static final Duration HORIZON = Duration.ofDays(8);
  private static final DateTimeFormatter HH_MM = DateTimeFormatter.ofPattern("HH:mm");
  private static final List<String> DAY_NAMES = List.of("mon", "tue", "wed", "thu", "fri", "sat", "sun");

  /** What runs outside every open interval. */
  public enum Action {
    PAUSE, SCALE, STOP;

    /** The wire name: {@code pause}, {@code scale} or {@code stop}. */
    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** The action with this wire name, if any. */
    public static Optional<Action> fromWire(String wire) {
      for (Action action : values()) {
        if (action.wire().equals(wire)) {
          return Optional.of(action);
        }
      }
      return Optional.empty();
    }
  }

  /**
   * One open interval, repeated on each of {@code days}: from {@code from} to {@code to} ({@code to <= from}
   * crosses midnight), or to the end of the day when {@code toEndOfDay} (then {@code to} is 00:00).
   */
  public record Interval(Set<DayOfWeek> days, LocalTime from, LocalTime to, boolean toEndOfDay) {
    public Interval {
      Objects.requireNonNull(from, "from");
      if (days == null || days.isEmpty()) {
        throw new IllegalArgumentException("an interval needs at least one day");
      }
      days = Collections.unmodifiableSet(EnumSet.copyOf(days));
      to = toEndOfDay ? LocalTime.MIDNIGHT : Objects.requireNonNull(to, "to");
      if (!toEndOfDay && from.equals(to)) {
        throw new IllegalArgumentException("an interval from " + from + " to " + to + " is empty");
      }
    }

    /** The wire form of the end: {@code "HH:mm"} or {@code "24:00"}. */
    public String toWire() {
      return toEndOfDay ? "24:00" : HH_MM.format(to);
    }

    /** The instant this interval's occurrence on {@code date} opens. */
    Instant startOn(LocalDate date, ZoneId zone) {
      return ZonedDateTime.of(date, from, zone).toInstant();
    }

    /** The instant this interval's occurrence on {@code date} closes. */
    Instant endOn(LocalDate date, ZoneId zone) {
      if (toEndOfDay) {
        return date.plusDays(1).atStartOfDay(zone).toInstant();
      }
      return ZonedDateTime.of(to.isAfter(from) ? date : date.plusDays(1), to, zone).toInstant();
    }
  }

  public ScheduleWindows {
    Objects.requireNonNull(timezone, "timezone");
    Objects.requireNonNull(action, "action");
    open = List.copyOf(open);
    if ((action == Action.SCALE) != (scaleTo != null)) {
      throw new IllegalArgumentException("scale_to is required for scale and only for scale");
    }
  }

  /** The wire name of a day ({@code mon} … {@code sun}). */
  public static String dayName(DayOfWeek day) {
    return DAY_NAMES.get(day.getValue() - 1);
  }

  /** The day with this wire name ({@code mon} … {@code sun}), if any. */
  public static Optional<DayOfWeek> day(String name) {
    int index = DAY_NAMES.indexOf(name);
    return index < 0 ? Optional.empty() : Optional.of(DayOfWeek.of(index + 1));
  }

  /** Whether {@code now} lies inside an open interval (start inclusive, end exclusive). */
  public boolean isOpen(Instant now) {
    for (Instant[] span : occurrences(now, 0)) {
      if (!now.isBefore(span[0]) && now.isBefore(span[1])) {
        return true;
      }
    }
    return false;
  }

  /**
   * The first instant after {@code now} at which {@link #isOpen} changes (touching or overlapping intervals are
   * merged, so they have no edge between them), looking at most {@link #HORIZON} ahead; null when the state does
   * not change within it (then it never changes: the calendar repeats weekly).
   */
  public Instant nextEdge(Instant now) {
    List<Instant[]> spans = occurrences(now, HORIZON.toDays() + 1);
    spans.sort(Comparator.comparing(span -> span[0]));
    Instant limit = now.plus(HORIZON);
    Instant start = null;
    Instant end = null;
    List<Instant> edges = new ArrayList<>();
    for (Instant[] span : spans) {
      if (end != null && !span[0].isAfter(end)) {
        end = span[1].isAfter(end) ? span[1] : end;
        continue;
      }
      if (end != null) {
        edges.add(start);
        edges.add(end);
      }
      start = span[0];
      end = span[1];
    }
    if (end != null) {
      edges.add(start);
      edges.add(end);
    }
    for (Instant edge : edges) {
      if (edge.isAfter(now)) {
        return edge.isAfter(limit) ? null : edge;
      }
    }
    return null;
  }

  /**
   * The non-empty occurrences [start, end) of every interval on the local dates from two days before
   * {@code now}'s date to {@code daysAhead} days after it (an occurrence lasts at most a day and a DST hour).
   */
  private List<Instant[]> occurrences(Instant now, long daysAhead) {
    LocalDate today = LocalDate.ofInstant(now, timezone);
    List<Instant[]> spans = new ArrayList<>();
    for (LocalDate date = today.minusDays(2); !date.isAfter(today.plusDays(daysAhead)); date = date.plusDays(1)) {
      for (Interval interval : open) {
        if (interval.days().contains(date.getDayOfWeek())) {
          Instant start = interval.startOn(date, timezone);
          Instant end = interval.endOn(date, timezone);
          if (end.isAfter(start)) {
            spans.add(new Instant[] {start, end});
          }
        }
      }
    }
    return spans;
  }

  /** The canonical wire form: times as {@code HH:mm} ({@code 24:00} for the end of day), days mon..sun. */
  public JsonObject toJson() {
    JsonArray intervals = new JsonArray();
    for (Interval interval : open) {
      JsonArray days = new JsonArray();
      interval.days().forEach(day -> days.add(dayName(day)));
      intervals.add(new JsonObject().put("days", days).put("from", HH_MM.format(interval.from()))
          .put("to", interval.toWire()));
    }
    JsonObject json = new JsonObject().put("timezone", timezone.getId()).put("open", intervals)
        .put("action", action.wire());
    return scaleTo == null ? json : json.put("scale_to", scaleTo);
  }

  /** Reads back what {@link #toJson} wrote (e.g. from the database); the input is assumed valid. */
  public static ScheduleWindows fromJson(JsonObject json) {
    List<Interval> intervals = new ArrayList<>();
    for (Object item : json.getJsonArray("open")) {
      JsonObject interval = (JsonObject) item;
      Set<DayOfWeek> days = EnumSet.noneOf(DayOfWeek.class);
      for (Object name : interval.getJsonArray("days")) {
        days.add(day((String) name).orElseThrow(() -> new IllegalArgumentException("unknown day " + name)));
      }
      String to = interval.getString("to");
      boolean endOfDay = "24:00".equals(to);
      intervals.add(new Interval(days, LocalTime.parse(interval.getString("from"), HH_MM),
          endOfDay ? LocalTime.MIDNIGHT : LocalTime.parse(to, HH_MM), endOfDay));
    }
    Action action = Action.fromWire(json.getString("action"))
        .orElseThrow(() -> new IllegalArgumentException("unknown action " + json.getString("action")));
    return new ScheduleWindows(ZoneId.of(json.getString("timezone", "UTC")), intervals, action,
        json.getInteger("scale_to"));
  }
}
