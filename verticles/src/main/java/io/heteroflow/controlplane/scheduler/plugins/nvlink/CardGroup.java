package io.heteroflow.controlplane.scheduler.plugins.nvlink;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The best group of N free cards on a node (SPEC §4.2): inside the smallest NVLink domain that still has N
 * free cards (big domains stay whole for big tasks), same-NUMA cards first inside it; without such a domain,
 * cards across domains (largest free parts first). Scoring and card picking use the same group.
 */
record CardGroup(List<Integer> cards, boolean insideOneDomain, boolean domainExactlyUsed, boolean domainAllFree,
                 Boolean sameNuma) {

  static CardGroup best(NvlinkTopology topology, Set<Integer> free, int count) {
    List<TreeSet<Integer>> candidates = new ArrayList<>();
    for (TreeSet<Integer> domain : topology.domains()) {
      if (freeIn(domain, free).size() >= count) {
        candidates.add(domain);
      }
    }
    if (!candidates.isEmpty()) {
      candidates.sort(Comparator.comparingInt((TreeSet<Integer> domain) -> freeIn(domain, free).size())
          .thenComparingInt(TreeSet::size).thenComparingInt(TreeSet::first));
      TreeSet<Integer> domain = candidates.get(0);
      List<Integer> available = freeIn(domain, free);
      List<Integer> cards = sameNumaFirst(available, count, topology.numa());
      return new CardGroup(cards, true, available.size() == count, available.size() == domain.size(),
          sameNuma(cards, topology.numa()));
    }
    List<List<Integer>> parts = new ArrayList<>();
    for (TreeSet<Integer> domain : topology.domains()) {
      List<Integer> available = freeIn(domain, free);
      if (!available.isEmpty()) {
        parts.add(available);
      }
    }
    parts.sort(Comparator.comparingInt((List<Integer> part) -> -part.size()).thenComparingInt(part -> part.get(0)));
    List<Integer> cards = new ArrayList<>();
    for (List<Integer> part : parts) {
      for (int card : part) {
        if (cards.size() < count) {
          cards.add(card);
        }
      }
    }
    if (cards.size() < count) {
      return null;
    }
    return new CardGroup(cards, false, false, false, sameNuma(cards, topology.numa()));
  }

  private static List<Integer> freeIn(TreeSet<Integer> domain, Set<Integer> free) {
    List<Integer> available = new ArrayList<>();
    for (int card : domain) {
      if (free.contains(card)) {
        available.add(card);
      }
    }
    return available;
  }

  /** From the NUMA node that fits the group most tightly (or has the most cards), then the rest by index. */
  private static List<Integer> sameNumaFirst(List<Integer> available, int count, Map<Integer, Integer> numa) {
    Map<Integer, List<Integer>> byNuma = new HashMap<>();
    for (int card : available) {
      byNuma.computeIfAbsent(numa.getOrDefault(card, -1), node -> new ArrayList<>()).add(card);
    }
    List<List<Integer>> groups = new ArrayList<>(byNuma.values());
    groups.sort(Comparator.comparingInt((List<Integer> group) -> group.size() >= count ? group.size() : Integer.MAX_VALUE)
        .thenComparingInt(group -> -group.size()).thenComparingInt(group -> group.get(0)));
    List<Integer> cards = new ArrayList<>();
    for (List<Integer> group : groups) {
      for (int card : group) {
        if (cards.size() < count) {
          cards.add(card);
        }
      }
    }
    return cards;
  }

  /** True / false when every card's NUMA node is known; null when any is unknown. */
  private static Boolean sameNuma(List<Integer> cards, Map<Integer, Integer> numa) {
    Integer first = null;
    for (int card : cards) {
      Integer node = numa.get(card);
      if (node == null) {
        return null;
      }
      if (first != null && !first.equals(node)) {
        return false;
      }
      first = node;
    }
    return true;
  }
}
