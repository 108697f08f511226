package io.heteroflow.agent.executor;

import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The docker CLI arguments that give a container exactly its cards, per vendor (device nodes as evidenced in
 * the vendors' device plugins; see ../shared/VENDOR-TOOLS.md). NVIDIA's runtime renumbers the cards inside the
 * container ({@code --gpus}); the other vendors pass device nodes through and keep host numbering.
 */
public final class DockerDevices {
  private DockerDevices() {}

  public static List<String> flags(GpuVendor vendor, List<Integer> cards) {
    List<String> flags = new ArrayList<>();
    if (vendor == null || cards.isEmpty()) {
      return flags;
    }
    switch (vendor) {
      case NVIDIA -> {
        flags.add("--gpus");
        flags.add("\"device=" + cards.stream().map(String::valueOf).collect(Collectors.joining(",")) + "\"");
      }
      case ASCEND -> {
        cards.forEach(card -> device(flags, "/dev/davinci" + card));
        device(flags, "/dev/davinci_manager");
        device(flags, "/dev/devmm_svm");
        device(flags, "/dev/hisi_hdc");
      }
      case MUSA -> {
        flags.add("--env");
        flags.add("MTHREADS_VISIBLE_DEVICES=" + join(cards));
        device(flags, "/dev/dri");
      }
      case HYGON -> {
        device(flags, "/dev/kfd");
        device(flags, "/dev/dri");
        flags.add("--volume");
        flags.add("/opt/hyhal:/opt/hyhal:ro");
      }
      case CAMBRICON -> {
        cards.forEach(card -> {
          device(flags, "/dev/cambricon_dev" + card);
          device(flags, "/dev/cambricon_ipcm" + card);
        });
        device(flags, "/dev/cambricon_ctl");
        device(flags, "/dev/commu");
      }
      case BIREN -> cards.forEach(card -> device(flags, "/dev/biren/card_" + card));
      case KUNLUN -> {
        cards.forEach(card -> device(flags, "/dev/xpu" + card));
        device(flags, "/dev/xpuctrl");
      }
      case ILUVATAR -> {
        cards.forEach(card -> device(flags, "/dev/iluvatar" + card));
        device(flags, "/dev/itrctl");
      }
      case METAX -> {
        device(flags, "/dev/dri");
        device(flags, "/dev/mxcd");
      }
      case ENFLAME -> {
        cards.forEach(card -> device(flags, "/dev/gcu" + card));
        device(flags, "/dev/gcuctl");
      }
      default -> throw new IllegalArgumentException("no device mapping for " + vendor);
    }
    return flags;
  }

  /** The visibility variable's value inside the container: renumbered for NVIDIA, host indices otherwise. */
  public static String visibleInside(GpuVendor vendor, List<Integer> cards) {
    if (vendor == GpuVendor.NVIDIA) {
      List<String> renumbered = new ArrayList<>();
      for (int i = 0; i < cards.size(); i++) {
        renumbered.add(String.valueOf(i));
      }
      return String.join(",", renumbered);
    }
    return join(cards);
  }

  private static void device(List<String> flags, String path) {
    flags.add("--device");
    flags.add(path);
  }

  private static String join(List<Integer> cards) {
    return cards.stream().map(String::valueOf).collect(Collectors.joining(","));
  }
}
