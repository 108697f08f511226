package io.heteroflow.controlplane.scheduler.plugins.nvlink;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A node's NVLink domains and NUMA affinity, parsed from its {@code heteroflow.io/gpu-topology} label:
 * {@code nvlink=0-1,2-3;numa=0,0,1,1} — each dash-joined group (or pair) is linked, domains are the connected
 * components (union-find), cards in no group are single-card domains; {@code numa} gives each card's NUMA
 * node ({@code -} or missing: unknown). Parsed labels are cached: nodes report the same label every heartbeat; the
 * cache keeps the {@link #CACHE_CAPACITY} most recently used, so hostile or ever-changing labels cannot grow it.
 */
public record NvlinkTopology(List<TreeSet<Integer>> domains, Map<Integer, Integer> numa, boolean hasLinks) {
  static final int CACHE_CAPACITY = 4096;
  static final LruCache<String, NvlinkTopology> CACHE = new LruCache<>(CACHE_CAPACITY);

  /** Null when the label is absent or unreadable: "no data", which the plugin treats as neutral. */
  public static NvlinkTopology parse(String label, int cardCount) {
    if (label == null || label.isBlank()) {
      return null;
    }
    return CACHE.computeIfAbsent(label + "#" + cardCount, key -> parseUncached(label, cardCount));
  }

  private static NvlinkTopology parseUncached(String label, int cardCount) {
    int[] parent = new int[cardCount];
    for (int i = 0; i < cardCount; i++) {
      parent[i] = i;
    }
    Map<Integer, Integer> numa = new HashMap<>();
    boolean links = false;
    try {
      for (String part : label.split(";")) {
        String[] keyValue = part.split("=", 2);
        String value = keyValue.length == 2 ? keyValue[1].trim() : "";
        if (keyValue[0].trim().equals("nvlink") && !value.isEmpty()) {
          for (String group : value.split(",")) {
            String[] cards = group.trim().split("-");
            for (int i = 1; i < cards.length; i++) {
              union(parent, card(cards[0], cardCount), card(cards[i], cardCount));
              links = true;
            }
          }
        } else if (keyValue[0].trim().equals("numa") && !value.isEmpty()) {
          String[] nodes = value.split(",");
          for (int card = 0; card < nodes.length && card < cardCount; card++) {
            if (!nodes[card].isBlank() && !nodes[card].trim().equals("-")) {
              numa.put(card, Integer.parseInt(nodes[card].trim()));
            }
          }
        }
      }
    } catch (IllegalArgumentException unreadable) {
      return null;
    }
    Map<Integer, TreeSet<Integer>> components = new HashMap<>();
    for (int card = 0; card < cardCount; card++) {
      components.computeIfAbsent(find(parent, card), root -> new TreeSet<>()).add(card);
    }
    List<TreeSet<Integer>> domains = new ArrayList<>(components.values());
    domains.sort((a, b) -> Integer.compare(a.first(), b.first()));
    return new NvlinkTopology(List.copyOf(domains), Map.copyOf(numa), links);
  }

  private static int card(String text, int cardCount) {
    int card = Integer.parseInt(text.trim());
    if (card < 0 || card >= cardCount) {
      throw new IllegalArgumentException("card " + card + " out of range");
    }
    return card;
  }

  private static int find(int[] parent, int card) {
    while (parent[card] != card) {
      parent[card] = parent[parent[card]];
      card = parent[card];
    }
    return card;
  }

  private static void union(int[] parent, int a, int b) {
    parent[find(parent, a)] = find(parent, b);
  }
}
