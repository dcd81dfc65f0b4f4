//===- ArenaBuffers.cpp - a function's buffers and their lifetimes --------===//

#include "tandem/Analysis/ArenaBuffers.h"

#include "tandem/Analysis/QueueProgramBuilder.h"

using namespace mlir;
using namespace mlir::tandem;

FailureOr<FunctionBuffers> tandem::collectArenaBuffers(Block &block) {
  FailureOr<BlockQueueProgram> built = buildQueueProgram(block, nullptr);
  if (failed(built))
    return failure();
  const QueueProgram &program = built->program;
  FunctionBuffers result;
  for (int64_t point = 0; point <= program.getEndPoint(); ++point)
    result.pointOps.push_back(built->opAtPoint(block, point));
  for (Arena arena : {Arena::CPU, Arena::GPU}) {
    ArenaBuffers &buffers = arena == Arena::GPU ? result.gpu : result.cpu;
    std::vector<int> indices;
    buffers.lifetimes = program.arenaLifetimes(arena, &indices);
    buffers.firstWorkspace = buffers.lifetimes.size();
    for (auto [position, index] : llvm::enumerate(indices)) {
      buffers.writers.push_back(built->bufferOps[index]);
      if (program.buffers[index].isWorkspace)
        buffers.firstWorkspace = std::min(buffers.firstWorkspace, position);
    }
  }
  return result;
}
