package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.GpuDetector;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Biren GPUs, read from the driver's device nodes and sysfs, not from {@code brsmi}: no real brsmi output is
 * public, so this detector parses none. What it relies on is evidenced by Biren's own device plugin
 * (Project-HAMi/biren-device-plugin; file and line references in test resources samples/biren/ORIGIN.md):
 * <ul>
 *   <li>{@code /dev/biren/card_N}: one node per schedulable card (a whole card, or one SVI instance of a
 *       partitioned card); the plugin hands exactly these nodes, by name, to containers.</li>
 *   <li>{@code /sys/class/biren/card_N/device/physical_id}: the physical card ("gpu hw") behind card_N.</li>
 * </ul>
 * The card index is N: the plugin identifies cards by their card_N name and nothing in the evidence says
 * SUPA_VISIBLE_DEVICES counts physical ids. Model is "Biren" (sysfs evidences no model name); memory,
 * utilization and temperature are 0 and uuid and NUMA node null, because no evidenced file reports them.
 * A missing physical_id file is tolerated (the card is still reported, as the plugin's own debug tool only logs
 * that read failure); a physical_id that is not a card number is unreadable output.
 */
public final class BirenDetector implements GpuDetector {
  static final String DEVICE_DIRECTORY = "/dev/biren";
  static final String SYSFS_CLASS_DIRECTORY = "/sys/class/biren";
  static final String MODEL = "Biren";
  private static final Pattern CARD_NODE = Pattern.compile("card_(\\d{1,9})");
  private static final Pattern PHYSICAL_ID = Pattern.compile("\\d{1,9}");

  @Override
  public GpuVendor vendor() {
    return GpuVendor.BIREN;
  }

  @Override
  public List<DetectedCard> detect(HostProbe host) throws ToolOutputException {
    TreeSet<Integer> cardNumbers = new TreeSet<>();
    for (String entry : host.list(DEVICE_DIRECTORY)) {
      Matcher cardNode = CARD_NODE.matcher(entry);
      if (cardNode.matches()) { // other names under /dev/biren are not card nodes
        cardNumbers.add(Integer.parseInt(cardNode.group(1)));
      }
    }
    List<DetectedCard> cards = new ArrayList<>();
    for (int cardNumber : cardNumbers) {
      readPhysicalId(host, cardNumber);
      cards.add(new DetectedCard(cardNumber, null, MODEL, 0, 0, 0, 0, null));
    }
    return List.copyOf(cards);
  }

  /** The sysfs file naming the physical card behind /dev/biren/card_N. */
  static String physicalIdPath(int cardNumber) {
    return SYSFS_CLASS_DIRECTORY + "/card_" + cardNumber + "/device/physical_id";
  }

  /**
   * The physical card number behind card_N, or empty when the driver exposes no physical_id file for it.
   * Throws when the file exists but does not hold a card number.
   */
  static Optional<Integer> readPhysicalId(HostProbe host, int cardNumber) throws ToolOutputException {
    String path = physicalIdPath(cardNumber);
    Optional<String> content = host.readFile(path);
    if (content.isEmpty()) {
      return Optional.empty();
    }
    String physicalId = content.get().strip();
    if (!PHYSICAL_ID.matcher(physicalId).matches()) {
      throw new ToolOutputException("Biren card_" + cardNumber + ": " + path + " reads '" + physicalId
          + "', expected a physical card number");
    }
    return Optional.of(Integer.parseInt(physicalId));
  }
}
