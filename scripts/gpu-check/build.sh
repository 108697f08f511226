#!/usr/bin/env bash
# Builds build/gpu-check/: the agent's classes and their runtime dependencies plus a jlink'd Java runtime, so
# the real-GPU check runs on a host that has a GPU (and maybe Python with PyTorch) but no Java, no network.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=build/gpu-check
rm -rf "$OUT" && mkdir -p "$OUT/lib"
./mvnw -B -q -pl agent-verticle -am -DskipTests install
./mvnw -B -q -pl agent-verticle dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$PWD/$OUT/lib"
cp agent-verticle/target/agent-verticle-*.jar "$OUT/lib/"
JLINK="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}/bin/jlink"
"$JLINK" --add-modules java.base,java.logging,java.management,jdk.management,jdk.unsupported,java.naming,jdk.crypto.ec \
  --strip-debug --no-header-files --no-man-pages --compress=2 --output "$OUT/jre"
cp scripts/gpu-check/run.sh "$OUT/run.sh"
du -sh "$OUT"
