//===- TandemToLLVM.cpp - placed, planned IR to calls into the runtime ----===//
//
// The compiled program is a straight line of runtime calls: each op's
// buffers are computed from its arena base and planned offset, and the op is
// executed by `tandem_rt_execute(rt, op, operands, result)`. What the runtime
// needs to know about each op (kind, device, shapes, attributes) travels in
// the model image, a constant array of words (ModelImage.h).
//
//===----------------------------------------------------------------------===//

#include "tandem/Conversion/Passes.h"

#include "FusedKernels.h"
#include "Ptx.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Analysis/QueueProgramBuilder.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "tandem/Dialect/Tandem/Transforms/Passes.h"
#include "tandem/Support/Format.h"
#include "tandem/Support/OutputFile.h"
#include "tandem/runtime/ModelImage.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>

namespace mlir::tandem {
#define GEN_PASS_DEF_CONVERTTANDEMTOLLVM
#include "tandem/Conversion/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;
namespace img = ::tandem::image;

namespace {

/// The model image under construction, and its string table.
struct ImageBuilder {
  std::vector<int64_t> words;
  std::string strings;

  int64_t addString(StringRef text) {
    int64_t offset = strings.size();
    strings.append(text.begin(), text.end());
    strings.push_back('\0');
    return offset;
  }
};

/// The image's code for a tensor type's element type; an error on `anchor`
/// (when given) if the runtime has none.
FailureOr<int64_t> elementTypeCode(Operation *anchor, Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped) {
    if (anchor)
      anchor->emitError() << "cannot lower " << type << ": not a tensor";
    return failure();
  }
  Type element = shaped.getElementType();
  if (element.isF32())
    return img::kF32;
  if (element.isF16())
    return img::kF16;
  if (element.isBF16())
    return img::kBF16;
  if (element.isInteger(64))
    return img::kI64;
  if (element.isInteger(32))
    return img::kI32;
  if (element.isInteger(1))
    return img::kBool;
  if (anchor)
    anchor->emitError() << "cannot lower element type " << element;
  return failure();
}

LogicalResult appendTensor(Operation *anchor, Type type,
                           std::vector<int64_t> &words) {
  FailureOr<int64_t> code = elementTypeCode(anchor, type);
  if (failed(code))
    return failure();
  ArrayRef<int64_t> shape = cast<ShapedType>(type).getShape();
  words.push_back(*code);
  words.push_back(shape.size());
  words.insert(words.end(), shape.begin(), shape.end());
  return success();
}

int64_t deviceCode(DeviceAttr device) {
  return device && device.isGPU() ? img::kGpu : img::kCpu;
}

/// The kind and attribute words `op` runs with (RuntimeOpInterface), or an
/// error on it if the runtime does not execute it.
FailureOr<std::pair<int64_t, std::vector<int64_t>>> describe(Operation *op) {
  auto runtimeOp = dyn_cast<RuntimeOpInterface>(op);
  if (!runtimeOp)
    return op->emitError() << "tandem-compile does not lower '"
                           << op->getName() << "'";
  std::vector<int64_t> words;
  if (failed(runtimeOp.writeRuntimeAttrs(words)))
    return failure();
  return std::make_pair(runtimeOp.getRuntimeKind(), std::move(words));
}

struct ConvertTandemToLLVM
    : mlir::tandem::impl::ConvertTandemToLLVMBase<ConvertTandemToLLVM> {
  using ConvertTandemToLLVMBase::ConvertTandemToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FunctionOpInterface func = getReportedFunction(module);
    if (!func || func.getName() != "main") {
      InFlightDiagnostic diag =
          module.emitError("a model needs a function @main: its arguments "
                           "are the inputs, its results the outputs");
      for (FunctionOpInterface other : getModelFunctions(module))
        diag.attachNote(other.getLoc()) << "found @" << other.getName();
      return signalPassFailure();
    }
    if (vectorMath != "" && vectorMath != "libmvec-avx2") {
      module.emitError("unknown --vector-math '")
          << vectorMath << "': 'libmvec-avx2' or '' (libm per lane)";
      return signalPassFailure();
    }
    if (failed(dropOtherFunctions(module, func)) ||
        failed(verifySignature(func)) || failed(verifyWeights(module, func)) ||
        failed(lower(module, func)))
      return signalPassFailure();
  }

  static VectorMath vectorMathOf(StringRef option) {
    return option == "libmvec-avx2" ? VectorMath::LibmvecAvx2
                                    : VectorMath::Libm;
  }

  /// The program is @main: other functions, which nothing calls, are left
  /// out with a warning (LLVM has no use for them); one that is referenced
  /// is an error, since @main cannot call it.
  LogicalResult dropOtherFunctions(ModuleOp module, FunctionOpInterface main) {
    // The at-load function of another function goes with it.
    FunctionOpInterface atLoad = getAtLoadFunction(module, main);
    for (auto other : llvm::make_early_inc_range(
             module.getOps<FunctionOpInterface>()))
      if (other != atLoad && other->hasAttr(TandemDialect::kAtLoadAttrName))
        other->erase();
    SmallVector<FunctionOpInterface> others;
    for (auto other : module.getOps<FunctionOpInterface>())
      if (other != main && other != atLoad)
        others.push_back(other);
    for (FunctionOpInterface other : others) {
      if (!SymbolTable::symbolKnownUseEmpty(other, module))
        return other.emitError()
               << "@" << other.getName()
               << " is called from the model: tandem-compile compiles @main "
                  "alone, with no calls; inline it into @main";
      other.emitWarning() << "@" << other.getName()
                          << " is not part of the model (@main): not compiled";
      other->erase();
    }
    return success();
  }

  /// The inputs and outputs are tensors the runtime can take and give: of a
  /// static shape and a supported element type, and, for an executable that
  /// reads and writes .npy files, one NumPy has.
  LogicalResult verifySignature(FunctionOpInterface func) {
    auto check = [&](Type type, StringRef what,
                     unsigned index) -> LogicalResult {
      auto tensor = dyn_cast<RankedTensorType>(type);
      bool supported = tensor && tensor.hasStaticShape() &&
                       succeeded(elementTypeCode(nullptr, type));
      if (!supported)
        return func.emitError()
               << "@main's " << what << " #" << index << " is " << type
               << ": a model's inputs and outputs are statically shaped "
                  "tensors of f32, f16, bf16, i64, i32 or i1";
      if (!library && tensor.getElementType().isBF16())
        return func.emitError()
               << "@main's " << what << " #" << index << " is " << type
               << ": the executable reads and writes .npy files, and NumPy "
                  "has no bf16; cast it to f32 in the model, or build a "
                  "library (--emit=lib) and pass raw buffers";
      if (!getCheckedNumBytes(type))
        return func.emitError()
               << "@main's " << what << " #" << index << " is " << type
               << ", over the " << formatBytes(kMaxTensorBytes)
               << " a tensor may take";
      return success();
    };
    for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
      if (failed(check(type, "argument", index)))
        return failure();
    for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
      if (failed(check(type, "result", index)))
        return failure();
    return success();
  }

  /// One weights file must satisfy every weight: a name read twice is read
  /// with one type.
  /// (The at-load function reads the same file: its weights count too; a
  /// folded weight is not in the file.)
  LogicalResult verifyWeights(ModuleOp module, FunctionOpInterface func) {
    llvm::StringMap<WeightOp> seen;
    auto check = [&](WeightOp weight) -> WalkResult {
      if (weight->hasAttr(TandemDialect::kFoldedAttrName))
        return WalkResult::advance();
      auto [it, inserted] = seen.try_emplace(weight.getName(), weight);
      if (inserted || it->second.getType() == weight.getType())
        return WalkResult::advance();
      weight.emitError() << "weight '" << weight.getName() << "' is read as "
                         << weight.getType() << " here and as "
                         << it->second.getType()
                         << " elsewhere: one weights file cannot hold both";
      return WalkResult::interrupt();
    };
    if (func.walk(check).wasInterrupted())
      return failure();
    FunctionOpInterface atLoad = getAtLoadFunction(module, func);
    return failure(atLoad && atLoad.walk(check).wasInterrupted());
  }

  /// One function's part of the model image, and what its calls name.
  struct EncodedFunction {
    std::vector<int64_t> words;
    /// The image's ops, in order, and each op's and weight's index.
    std::vector<Operation *> ops;
    llvm::DenseMap<Operation *, int> weightIndex, opIndex;
  };

  /// The image of `func` (its strings added to `image`); generated kernels
  /// are numbered on from `numKernels`.
  FailureOr<EncodedFunction> encode(ModuleOp module, FunctionOpInterface func,
                                    ImageBuilder &image, int64_t &numKernels) {
    MLIRContext *context = module.getContext();
    EncodedFunction encoded;
    auto cpuArena = func->getAttrOfType<IntegerAttr>(
        TandemDialect::kCpuArenaBytesAttrName);
    auto gpuArena = func->getAttrOfType<IntegerAttr>(
        TandemDialect::kGpuArenaBytesAttrName);
    auto budget = func->getAttrOfType<IntegerAttr>(
        TandemDialect::kGpuMemoryBudgetAttrName);
    if (!cpuArena || !gpuArena || !budget)
      return func.emitError()
             << "@" << func.getName()
             << " is not placed and planned: run "
                "--tandem-placement-pipeline first";
    Block &body = func.getFunctionBody().front();
    Operation *terminator = body.getTerminator();

    // The cost model's predictions, per queue item (the image's ops, in
    // order) and for the whole run.
    std::vector<int64_t> predictedNs;
    int64_t makespanNs = 0, serialNs = 0;
    if (!deviceProfile.empty()) {
      llvm::Expected<DeviceProfile> profile = loadDeviceProfile(deviceProfile);
      if (!profile)
        return func.emitError(llvm::toString(profile.takeError()));
      FailureOr<BlockQueueProgram> built = buildQueueProgram(body, &*profile);
      if (failed(built))
        return failure();
      auto nanoseconds = [](double us) { return int64_t(std::llround(us * 1e3)); };
      SimulatedSchedule times = simulateQueueProgram(built->program);
      // The image records nanoseconds in int64: about 106 days at most.
      constexpr double kMaxRecordedUs = 9e15;
      if (!(times.serialUs <= kMaxRecordedUs))
        return func.emitError()
               << "the device profile '" << profile->name
               << "' predicts a run of " << times.serialUs
               << " us: beyond " << kMaxRecordedUs
               << " us, which the model cannot record; check the profile's "
                  "rates, efficiencies and fixed costs";
      for (const QueueItem &item : built->program.items)
        predictedNs.push_back(nanoseconds(item.us));
      makespanNs = nanoseconds(times.makespanUs);
      serialNs = nanoseconds(times.serialUs);
    }

    // A generated kernel per fused group, numbered in program order.
    for (auto fused : body.getOps<FusedOp>()) {
      generateFusedKernel(module, fused, kernelName(numKernels));
      fused->setAttr(TandemDialect::kKernelAttrName,
                     IntegerAttr::get(IntegerType::get(context, 64),
                                      numKernels++));
    }

    // Header, inputs, outputs.
    // The GPU kernels of the groups placed there, as PTX in the strings.
    int64_t ptxOffset = -1;
    {
      OwningOpRef<ModuleOp> gpuKernels = ModuleOp::create(func.getLoc());
      for (auto fused : body.getOps<FusedOp>())
        if (DeviceAttr device = getPlacedDevice(fused.getResult());
            device && device.isGPU())
          generateFusedGpuKernel(
              *gpuKernels, fused,
              kernelName(fused->getAttrOfType<IntegerAttr>(
                                   TandemDialect::kKernelAttrName)
                             .getInt()));
      if (!gpuKernels->getBody()->empty()) {
        FailureOr<std::string> ptx = compileToPtx(*gpuKernels);
        if (failed(ptx))
          return failure();
        ptxOffset = image.addString(*ptx);
      }
      // (The at-load function has no GPU groups: the file is the model's.)
      if (!ptxFile.empty() && !func->hasAttr(TandemDialect::kAtLoadAttrName)) {
        std::string text = ptxOffset >= 0
                               ? std::string(image.strings.data() + ptxOffset)
                               : std::string();
        if (llvm::Error error = writeFileAtomically(
                ptxFile, [&](llvm::raw_ostream &os) { os << text; }))
          return func.emitError(llvm::toString(std::move(error)));
      }
    }
    std::vector<Operation *> weights;
    std::vector<Operation *> &ops = encoded.ops;
    for (Operation &op : body) {
      if (isa<WeightOp>(op))
        weights.push_back(&op);
      else if (&op != terminator && !isa<ViewLikeOpInterface, WaitOp>(op))
        ops.push_back(&op); // a view is its source's buffer: no op runs
    }
    std::vector<int64_t> &words = encoded.words;
    words = {img::kMagic,
                   img::kVersion,
                   int64_t(body.getNumArguments()),
                   int64_t(terminator->getNumOperands()),
                   int64_t(weights.size()),
                   int64_t(ops.size()),
                   cpuArena.getInt(),
                   gpuArena.getInt(),
                   budget.getInt(),
                   int64_t(isScheduled(func)),
                   makespanNs,
                   serialNs,
                   numKernels,
                   ptxOffset,
                   /*atLoadOffset=*/-1};
    for (BlockArgument argument : body.getArguments())
      if (failed(appendTensor(func, argument.getType(), words)))
        return failure();
    for (Value result : terminator->getOperands())
      if (failed(appendTensor(func, result.getType(), words)))
        return failure();
    llvm::DenseMap<Operation *, int> &weightIndex = encoded.weightIndex;
    for (Operation *op : weights) {
      auto weight = cast<WeightOp>(op);
      weightIndex[op] = weightIndex.size();
      DeviceAttr device = getPlacedDevice(weight.getResult());
      auto offset =
          op->getAttrOfType<IntegerAttr>(TandemDialect::kOffsetAttrName);
      words.push_back(image.addString(weight.getName()));
      words.push_back(deviceCode(device));
      words.push_back(offset ? offset.getInt() : 0);
      auto folded =
          op->getAttrOfType<IntegerAttr>(TandemDialect::kFoldedAttrName);
      words.push_back(folded ? folded.getInt() : -1);
      if (failed(appendTensor(op, weight.getType(), words)))
        return failure();
    }
    llvm::DenseMap<Operation *, int> &opIndex = encoded.opIndex;
    // The image op whose result `value` is (through views), or -1.
    auto producerIndex = [&](Value value) -> int64_t {
      Operation *producer = value.getDefiningOp();
      while (auto view = dyn_cast_or_null<ViewLikeOpInterface>(producer))
        producer = view.getViewSource().getDefiningOp();
      auto found = opIndex.find(producer);
      return found == opIndex.end() ? -1 : found->second;
    };
    // Waits met since each queue's last op: they go with its next one.
    std::array<std::vector<int64_t>, img::kNumQueues> pendingWaits;
    int64_t waitIndex = 0;
    for (Operation &bodyOp : body) {
      if (auto wait = dyn_cast<WaitOp>(bodyOp)) {
        if (waitIndex++ == testDropWait)
          continue;
        for (Value value : wait.getValues())
          if (int64_t producer = producerIndex(value); producer >= 0)
            pendingWaits[int64_t(wait.getQueue())].push_back(producer);
        continue;
      }
      if (&bodyOp == terminator ||
          isa<WeightOp, ViewLikeOpInterface>(bodyOp))
        continue;
      Operation *op = &bodyOp;
      FailureOr<std::pair<int64_t, std::vector<int64_t>>> description =
          describe(op);
      if (failed(description))
        return failure();
      if (op->getNumResults() != 1 ||
          !op->getAttrOfType<IntegerAttr>(TandemDialect::kOffsetAttrName))
        return op->emitError("has no planned buffer: run "
                             "--tandem-placement-pipeline first");
      opIndex[op] = opIndex.size();
      std::vector<int64_t> record = {
          description->first, deviceCode(getPlacedDevice(op->getResult(0))),
          op->getAttrOfType<IntegerAttr>(TandemDialect::kOffsetAttrName).getInt(),
          image.addString(displayName(op)),
          image.addString(formatLocation(op->getLoc())),
          image.addString(isa<TransferOp>(op)
                              ? StringRef("transfer")
                              : costFamilyName(costFamilyOf(op)))};
      std::optional<QueueKind> queue = getScheduledQueue(op);
      int64_t queueCode = queue ? int64_t(*queue) : img::kCpuQueue;
      std::vector<int64_t> &waits = pendingWaits[queueCode];
      record.push_back(queueCode);
      size_t index = opIndex[op];
      record.push_back(index < predictedNs.size() ? predictedNs[index] : 0);
      record.push_back(waits.size());
      llvm::append_range(record, waits);
      waits.clear();
      record.push_back(op->getNumOperands());
      for (Value operand : op->getOperands()) {
        record.push_back(deviceCode(getPlacedDevice(operand)));
        record.push_back(producerIndex(operand));
        if (failed(appendTensor(op, operand.getType(), record)))
          return failure();
      }
      if (failed(appendTensor(op, op->getResult(0).getType(), record)))
        return failure();
      record.push_back(description->second.size());
      llvm::append_range(record, description->second);
      words.push_back(record.size() + 1);
      llvm::append_range(words, record);
    }
    return encoded;
  }

  /// The runtime functions a model's calls go through.
  struct RuntimeCalls {
    LLVM::LLVMFuncOp arena, input, weight, execute, output;
  };

  /// At the builder: the calls that run `func` (encoded as `encoded`) on
  /// the runtime `rt`, then a return.
  void emitCalls(OpBuilder &builder, FunctionOpInterface func,
                 const EncodedFunction &encoded, Value rt,
                 const RuntimeCalls &calls) {
    Location loc = func.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(builder.getContext());
    auto i32 = builder.getI32Type();
    auto i64 = builder.getI64Type();
    Block &body = func.getFunctionBody().front();
    Operation *terminator = body.getTerminator();
    const std::vector<Operation *> &ops = encoded.ops;
    const llvm::DenseMap<Operation *, int> &weightIndex = encoded.weightIndex;
    const llvm::DenseMap<Operation *, int> &opIndex = encoded.opIndex;
    auto constant = [&](Type type, int64_t value) -> Value {
      return builder.create<LLVM::ConstantOp>(loc, type,
                                              builder.getIntegerAttr(type, value));
    };
    Value arenas[2] = {
        builder.create<LLVM::CallOp>(loc, calls.arena,
                                     ValueRange{rt, constant(i32, 0)})
            .getResult(),
        builder.create<LLVM::CallOp>(loc, calls.arena,
                                     ValueRange{rt, constant(i32, 1)})
            .getResult()};
    unsigned maxOperands = 1;
    for (Operation *op : ops)
      maxOperands = std::max(maxOperands, op->getNumOperands());
    Value operandArray = builder.create<LLVM::AllocaOp>(
        loc, ptr, ptr, constant(i64, maxOperands));

    llvm::DenseMap<Value, Value> address;
    for (BlockArgument argument : body.getArguments())
      address[argument] = builder
                              .create<LLVM::CallOp>(
                                  loc, calls.input,
                                  ValueRange{rt, constant(i32, argument.getArgNumber())})
                              .getResult();
    auto bufferOf = [&](Operation *op) -> Value {
      int64_t offset =
          op->getAttrOfType<IntegerAttr>(TandemDialect::kOffsetAttrName).getInt();
      Value base = arenas[deviceCode(getPlacedDevice(op->getResult(0)))];
      // Offsets can pass 2 GiB (resident weights): index with an i64 value.
      return builder.create<LLVM::GEPOp>(op->getLoc(), ptr, builder.getI8Type(),
                                         base,
                                         ArrayRef<LLVM::GEPArg>{constant(i64, offset)});
    };
    for (Operation &op : body) {
      if (&op == terminator)
        break;
      if (isa<WeightOp>(op)) {
        // Host weights are read where they are mapped; GPU weights were
        // uploaded to their planned offset before the first run.
        if (deviceCode(getPlacedDevice(op.getResult(0))) == img::kGpu)
          address[op.getResult(0)] = bufferOf(&op);
        else
          address[op.getResult(0)] =
              builder
                  .create<LLVM::CallOp>(
                      op.getLoc(), calls.weight,
                      ValueRange{rt, constant(i32, weightIndex.lookup(&op))})
                  .getResult();
        continue;
      }
      if (isa<WaitOp>(op))
        continue; // in the image, with the next op of its queue
      if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
        // Buffers are dense and row-major: a view (a reshape) reads the same
        // bytes (--tandem-plan-memory keeps them alive for its users).
        address[op.getResult(0)] = address.lookup(view.getViewSource());
        continue;
      }
      Value result = bufferOf(&op);
      for (auto [k, operand] : llvm::enumerate(op.getOperands())) {
        Value slot = builder.create<LLVM::GEPOp>(
            op.getLoc(), ptr, ptr, operandArray,
            ArrayRef<LLVM::GEPArg>{int32_t(k)});
        builder.create<LLVM::StoreOp>(op.getLoc(), address.lookup(operand),
                                      slot);
      }
      builder.create<LLVM::CallOp>(
          op.getLoc(), calls.execute,
          ValueRange{rt, constant(i32, opIndex.lookup(&op)), operandArray, result});
      address[op.getResult(0)] = result;
    }
    for (auto [k, value] : llvm::enumerate(terminator->getOperands()))
      builder.create<LLVM::CallOp>(
          loc, calls.output, ValueRange{rt, constant(i32, k), address.lookup(value)});
    builder.create<LLVM::ReturnOp>(loc, ValueRange{});
  }

  LogicalResult lower(ModuleOp module, FunctionOpInterface func) {
    MLIRContext *context = module.getContext();
    // The model's image, then its at-load function's (if it has one),
    // which the model's header points to.
    ImageBuilder image;
    int64_t numKernels = 0;
    FailureOr<EncodedFunction> model = encode(module, func, image, numKernels);
    if (failed(model))
      return failure();
    FunctionOpInterface atLoadFunc = getAtLoadFunction(module, func);
    std::optional<EncodedFunction> atLoad;
    if (atLoadFunc) {
      FailureOr<EncodedFunction> encoded =
          encode(module, atLoadFunc, image, numKernels);
      if (failed(encoded))
        return failure();
      atLoad = std::move(*encoded);
    }
    image.words = model->words;
    image.words[img::kNumKernelsWord] = numKernels;
    if (atLoad) {
      image.words[img::kAtLoadOffsetWord] = image.words.size();
      atLoad->words[img::kNumKernelsWord] = numKernels;
      llvm::append_range(image.words, atLoad->words);
    }

    // The LLVM dialect side.
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    Location loc = func.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto i32 = builder.getI32Type();
    auto i64 = builder.getI64Type();
    auto voidType = LLVM::LLVMVoidType::get(context);
    auto declare = [&](StringRef name, Type result, ArrayRef<Type> args) {
      return builder.create<LLVM::LLVMFuncOp>(
          loc, name, LLVM::LLVMFunctionType::get(result, args));
    };
    auto rtArena = declare("tandem_rt_arena", ptr, {ptr, i32});
    auto rtInput = declare("tandem_rt_input", ptr, {ptr, i32});
    auto rtWeight = declare("tandem_rt_weight", ptr, {ptr, i32});
    auto rtExecute = declare("tandem_rt_execute", voidType, {ptr, i32, ptr, ptr});
    auto rtOutput = declare("tandem_rt_output", voidType, {ptr, i32, ptr});
    RuntimeCalls calls{rtArena, rtInput, rtWeight, rtExecute, rtOutput};

    auto imageType = LLVM::LLVMArrayType::get(i64, image.words.size());
    auto imageGlobal = builder.create<LLVM::GlobalOp>(
        loc, imageType, /*isConstant=*/true, LLVM::Linkage::Internal,
        "tandem_model_image",
        DenseIntElementsAttr::get(
            RankedTensorType::get({int64_t(image.words.size())}, i64),
            ArrayRef<int64_t>(image.words)));
    auto stringsType =
        LLVM::LLVMArrayType::get(builder.getI8Type(), image.strings.size());
    auto stringsGlobal = builder.create<LLVM::GlobalOp>(
        loc, stringsType, /*isConstant=*/true, LLVM::Linkage::Internal,
        "tandem_model_strings", builder.getStringAttr(image.strings));

    // tandem_model_run(rt): one call per op. With an at-load function, the
    // runtime calls it once more while it loads the weights, with
    // tandem_rt_at_load(rt) naming the at-load function's own runtime: then
    // it runs that function's ops instead.
    LLVM::LLVMFuncOp rtAtLoad;
    if (atLoad)
      rtAtLoad = declare("tandem_rt_at_load", ptr, {ptr});
    auto run = declare("tandem_model_run", voidType, {ptr});
    run.setLinkage(LLVM::Linkage::Internal);
    Block *entry = run.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    Value rt = entry->getArgument(0);
    if (atLoad) {
      Block *runBlock = new Block(), *loadBlock = new Block();
      run.getBody().push_back(runBlock);
      run.getBody().push_back(loadBlock);
      builder.setInsertionPointToEnd(entry);
      Value loading =
          builder.create<LLVM::CallOp>(loc, rtAtLoad, ValueRange{rt}).getResult();
      Value notLoading = builder.create<LLVM::ICmpOp>(
          loc, LLVM::ICmpPredicate::eq, loading,
          builder.create<LLVM::ZeroOp>(loc, ptr));
      builder.create<LLVM::CondBrOp>(loc, notLoading, runBlock, loadBlock);
      builder.setInsertionPointToStart(loadBlock);
      emitCalls(builder, atLoadFunc, *atLoad, loading, calls);
      builder.setInsertionPointToStart(runBlock);
    }
    emitCalls(builder, func, *model, rt, calls);

    func->erase();
    if (atLoadFunc)
      atLoadFunc->erase();
    if (failed(lowerGeneratedKernelsToLLVM(module, vectorMathOf(vectorMath))))
      return failure();
    builder.setInsertionPointToEnd(module.getBody());
    auto kernels = emitKernelTable(builder, loc, numKernels);
    if (library)
      emitLibraryEntryPoints(builder, loc, imageGlobal, stringsGlobal, kernels,
                             run);
    else
      emitMain(builder, loc, imageGlobal, stringsGlobal, kernels, run);
    return success();
  }

  static std::string kernelName(int64_t index) {
    return "tandem_fused_" + std::to_string(index);
  }

  /// tandem_model_kernels, the table of the generated kernels (internal to
  /// the model's object, as its image is), or null when there are none.
  std::function<Value(OpBuilder &)>
  emitKernelTable(OpBuilder &builder, Location loc, int64_t numKernels) {
    MLIRContext *context = builder.getContext();
    auto ptr = LLVM::LLVMPointerType::get(context);
    if (numKernels == 0)
      return [=](OpBuilder &b) -> Value {
        return b.create<LLVM::ZeroOp>(loc, ptr);
      };
    for (int64_t k = 0; k < numKernels; ++k)
      if (auto kernel = getOperation().lookupSymbol<LLVM::LLVMFuncOp>(
              kernelName(k)))
        kernel.setLinkage(LLVM::Linkage::Internal);
    auto tableType = LLVM::LLVMArrayType::get(ptr, numKernels);
    auto table = builder.create<LLVM::GlobalOp>(
        loc, tableType, /*isConstant=*/true, LLVM::Linkage::Internal,
        "tandem_model_kernels", Attribute());
    {
      OpBuilder::InsertionGuard guard(builder);
      Block *init = builder.createBlock(&table.getInitializerRegion());
      builder.setInsertionPointToStart(init);
      Value array = builder.create<LLVM::UndefOp>(loc, tableType);
      for (int64_t k = 0; k < numKernels; ++k) {
        Value address = builder.create<LLVM::AddressOfOp>(
            loc, ptr, FlatSymbolRefAttr::get(context, kernelName(k)));
        array = builder.create<LLVM::InsertValueOp>(loc, array, address,
                                                    ArrayRef<int64_t>{k});
      }
      builder.create<LLVM::ReturnOp>(loc, array);
    }
    return [=](OpBuilder &b) -> Value {
      return b.create<LLVM::AddressOfOp>(loc, table);
    };
  }

  /// main(argc, argv) hands the image and the body to the runtime.
  void emitMain(OpBuilder &builder, Location loc, LLVM::GlobalOp image,
                LLVM::GlobalOp strings,
                const std::function<Value(OpBuilder &)> &kernels,
                LLVM::LLVMFuncOp run) {
    auto ptr = LLVM::LLVMPointerType::get(builder.getContext());
    auto i32 = builder.getI32Type();
    auto rtMain = builder.create<LLVM::LLVMFuncOp>(
        loc, "tandem_rt_main",
        LLVM::LLVMFunctionType::get(i32, {i32, ptr, ptr, ptr, ptr, ptr}));
    auto main = builder.create<LLVM::LLVMFuncOp>(
        loc, "main",
        LLVM::LLVMFunctionType::get(i32, {i32, ptr}));
    Block *entry = main.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    Value status =
        builder
            .create<LLVM::CallOp>(
                loc, rtMain,
                ValueRange{entry->getArgument(0), entry->getArgument(1),
                           builder.create<LLVM::AddressOfOp>(loc, image),
                           builder.create<LLVM::AddressOfOp>(loc, strings),
                           kernels(builder),
                           builder.create<LLVM::AddressOfOp>(loc, run)})
            .getResult();
    builder.create<LLVM::ReturnOp>(loc, status);
  }

  /// tandem_model_load / _infer / _unload over one runtime handle.
  void emitLibraryEntryPoints(OpBuilder &builder, Location loc,
                              LLVM::GlobalOp image, LLVM::GlobalOp strings,
                              const std::function<Value(OpBuilder &)> &kernels,
                              LLVM::LLVMFuncOp run) {
    MLIRContext *context = builder.getContext();
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto i32 = builder.getI32Type(), i64 = builder.getI64Type();
    auto voidType = LLVM::LLVMVoidType::get(context);
    auto declare = [&](StringRef name, Type result, ArrayRef<Type> args) {
      return builder.create<LLVM::LLVMFuncOp>(
          loc, name, LLVM::LLVMFunctionType::get(result, args));
    };
    auto rtLoad =
        declare("tandem_rt_load", i32,
                {ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, i64});
    auto rtInfer = declare("tandem_rt_infer", i32, {ptr, ptr, ptr, ptr, ptr, i64});
    auto rtClose = declare("tandem_rt_close", voidType, {ptr});
    // The handle of the loaded model; null until tandem_model_load.
    auto handle = builder.create<LLVM::GlobalOp>(
        loc, ptr, /*isConstant=*/false, LLVM::Linkage::Internal,
        "tandem_model_handle", Attribute());
    {
      OpBuilder::InsertionGuard guard(builder);
      Block *init = builder.createBlock(&handle.getInitializerRegion());
      builder.setInsertionPointToStart(init);
      builder.create<LLVM::ReturnOp>(loc,
                                     builder.create<LLVM::ZeroOp>(loc, ptr).getResult());
    }

    auto load = declare("tandem_model_load", i32, {ptr, ptr, ptr, i64});
    Block *entry = load.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    // The runtime stores the handle only on success: a failed load leaves
    // a loaded model as it was.
    Value loaded =
        builder
            .create<LLVM::CallOp>(
                loc, rtLoad,
                ValueRange{builder.create<LLVM::AddressOfOp>(loc, handle),
                           builder.create<LLVM::AddressOfOp>(loc, image),
                           builder.create<LLVM::AddressOfOp>(loc, strings),
                           kernels(builder),
                           builder.create<LLVM::AddressOfOp>(loc, run),
                           entry->getArgument(0),
                           entry->getArgument(1),
                           entry->getArgument(2), entry->getArgument(3)})
            .getResult();
    builder.create<LLVM::ReturnOp>(loc, loaded);

    builder.setInsertionPointToEnd(getOperation().getBody());
    auto infer = declare("tandem_model_infer", i32, {ptr, ptr, ptr, i64});
    entry = infer.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    Value current = builder.create<LLVM::LoadOp>(
        loc, ptr, builder.create<LLVM::AddressOfOp>(loc, handle));
    Value status =
        builder
            .create<LLVM::CallOp>(
                loc, rtInfer,
                ValueRange{current, builder.create<LLVM::AddressOfOp>(loc, run),
                           entry->getArgument(0), entry->getArgument(1),
                           entry->getArgument(2), entry->getArgument(3)})
            .getResult();
    builder.create<LLVM::ReturnOp>(loc, status);

    builder.setInsertionPointToEnd(getOperation().getBody());
    auto unload = declare("tandem_model_unload", voidType, {});
    entry = unload.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    Value address = builder.create<LLVM::AddressOfOp>(loc, handle);
    builder.create<LLVM::CallOp>(
        loc, rtClose, ValueRange{builder.create<LLVM::LoadOp>(loc, ptr, address)});
    builder.create<LLVM::StoreOp>(loc, builder.create<LLVM::ZeroOp>(loc, ptr),
                                  address);
    builder.create<LLVM::ReturnOp>(loc, ValueRange{});
  }
};

} // namespace
