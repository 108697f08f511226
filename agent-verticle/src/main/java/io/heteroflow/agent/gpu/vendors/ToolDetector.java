package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.GpuDetector;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.Optional;

/**
 * The {@code detect()} frame of every detector that reads a vendor tool's answer (the {@link GpuDetector}
 * contract, SPEC §8): ask the tool ({@link #answer}: by default run the command); no answer means the vendor
 * is absent (no cards, no error); an answer is read by the vendor's parser ({@link #read}), and whatever that
 * parser did not expect (a RuntimeException) is unreadable output as well: a {@link ToolOutputException}
 * "TOOL output could not be read: …". Each detector keeps only its commands and its parsing.
 */
abstract class ToolDetector implements GpuDetector {
  private final GpuVendor vendor;
  private final String tool;
  private final String[] command;

  /**
   * @param tool how error messages name the tool
   * @param command what {@link #answer} runs
   */
  ToolDetector(GpuVendor vendor, String tool, String... command) {
    this.vendor = vendor;
    this.tool = tool;
    this.command = command.clone();
  }

  @Override
  public final GpuVendor vendor() {
    return vendor;
  }

  @Override
  public final List<DetectedCard> detect(HostProbe host) throws ToolOutputException {
    Optional<String> output = answer(host);
    if (output.isEmpty()) {
      return List.of();
    }
    try {
      return read(output.get(), host);
    } catch (ToolOutputException unreadable) {
      throw unreadable(unreadable);
    } catch (RuntimeException unexpected) { // the contract: unreadable output is a ToolOutputException, always
      throw new ToolOutputException(tool + " output could not be read: " + unexpected);
    }
  }

  /** The tool's output; empty when the tool is not installed. A tool that refuses throws. */
  Optional<String> answer(HostProbe host) throws ToolOutputException {
    return host.run(command);
  }

  /** The cards in the tool's output; throws when the output is cut off, out of shape or unreadable. */
  abstract List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException;

  /** The parser's own error as the operator sees it: as thrown, unless the parser's messages leave out the tool. */
  ToolOutputException unreadable(ToolOutputException thrown) {
    return thrown;
  }

  /** {@code thrown} with the tool's name in front (for parsers whose messages leave it out). */
  final ToolOutputException namingTheTool(ToolOutputException thrown) {
    return new ToolOutputException(tool + " " + thrown.getMessage());
  }
}
