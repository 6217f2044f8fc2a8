//===- WarpSpecialization.cpp - the sm90 warp-specialization plan --------===//
//
// The policy of tile-warp-specialize (WarpSpecialization.h) and the plan's
// round trip through the `sm90.warp_specialize` attribute.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/TileToSM90/Analysis/WarpSpecialization.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

bool sm90::isSM90Chip(StringRef chip) { return chip == "sm_90a"; }

DictionaryAttr WarpSpecialization::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("producers", b.getI64IntegerAttr(producers)),
      b.getNamedAttr("consumers", b.getI64IntegerAttr(consumers)),
      b.getNamedAttr("producer_regs", b.getI64IntegerAttr(producerRegs)),
      b.getNamedAttr("consumer_regs", b.getI64IntegerAttr(consumerRegs)),
      b.getNamedAttr("block_k", b.getI64IntegerAttr(blockK)),
      b.getNamedAttr("stages", b.getI64IntegerAttr(stages)),
      b.getNamedAttr("threads", b.getI64IntegerAttr(threads())),
  };
  if (persistent)
    attrs.push_back(b.getNamedAttr("persistent", b.getBoolAttr(true)));
  if (pingpong) {
    attrs.push_back(b.getNamedAttr("schedule", b.getStringAttr("pingpong")));
    attrs.push_back(b.getNamedAttr("unit_n", b.getI64IntegerAttr(unitN)));
  }
  if (tmaStore)
    attrs.push_back(b.getNamedAttr("epilogue", b.getStringAttr("tma")));
  return b.getDictionaryAttr(attrs);
}

FailureOr<WarpSpecialization> WarpSpecialization::fromAttr(Attribute attr) {
  auto d = dyn_cast_or_null<DictionaryAttr>(attr);
  if (!d)
    return failure();
  WarpSpecialization ws;
  auto get = [&](StringRef name, int64_t &out) {
    if (auto i = d.getAs<IntegerAttr>(name)) {
      out = i.getInt();
      return true;
    }
    return false;
  };
  if (!get("producers", ws.producers) || !get("consumers", ws.consumers) ||
      !get("producer_regs", ws.producerRegs) ||
      !get("consumer_regs", ws.consumerRegs) || !get("block_k", ws.blockK) ||
      !get("stages", ws.stages))
    return failure();
  if (auto p = d.getAs<BoolAttr>("persistent"))
    ws.persistent = p.getValue();
  if (auto s = d.getAs<StringAttr>("schedule"))
    ws.pingpong = s.getValue() == "pingpong";
  if (ws.pingpong &&
      (!ws.persistent || ws.consumers != 2 || !get("unit_n", ws.unitN)))
    return failure();
  if (auto e = d.getAs<StringAttr>("epilogue"))
    ws.tmaStore = e.getValue() == "tma";
  if (ws.tmaStore && (!ws.persistent || ws.pingpong))
    return failure();
  return ws;
}

FailureOr<PersistentMode> sm90::parsePersistentMode(StringRef s) {
  if (s == "auto")
    return PersistentMode::Auto;
  if (s == "true" || s == "1" || s == "on")
    return PersistentMode::On;
  if (s == "false" || s == "0" || s == "off")
    return PersistentMode::Off;
  return failure();
}

FailureOr<ScheduleMode> sm90::parseScheduleMode(StringRef s) {
  if (s == "auto")
    return ScheduleMode::Auto;
  if (s == "cooperative")
    return ScheduleMode::Cooperative;
  if (s == "pingpong" || s == "ping-pong")
    return ScheduleMode::PingPong;
  return failure();
}

FailureOr<EpilogueMode> sm90::parseEpilogueMode(StringRef s) {
  if (s == "auto")
    return EpilogueMode::Auto;
  if (s == "tma")
    return EpilogueMode::Tma;
  if (s == "registers")
    return EpilogueMode::Registers;
  return failure();
}

int64_t sm90::pingpongUnitN(const GemmMatch &m) {
  // A unit's accumulator (TM x unitN f32 over one warpgroup's 128 threads)
  // stays at 128 registers per thread, like a cooperative 64-row share.
  int64_t unitN = std::min<int64_t>(m.tileN, 16384 / m.tileM);
  if (unitN < 64 || unitN % 64 != 0 || m.tileN % unitN != 0)
    return 0;
  return unitN;
}

WarpSpecialization sm90::decideWarpSpecialization(const GemmMatch &m,
                                                  PersistentMode persistent,
                                                  ScheduleMode schedule,
                                                  EpilogueMode epilogue) {
  WarpSpecialization ws;
  // Ping-pong (forced only, see docs/performance.md): two consumer
  // warpgroups, each owning whole TMx`unitN` units of the persistent loop.
  int64_t unitN = pingpongUnitN(m);
  if (schedule == ScheduleMode::PingPong && unitN != 0 &&
      persistent != PersistentMode::Off) {
    ws.persistent = true;
    ws.pingpong = true;
    ws.unitN = unitN;
    ws.consumers = 2;
    ws.producers = 1;
    ws.producerRegs = 40;
    ws.consumerRegs = 232;
    ws.blockK = kBlockK;
    int64_t stageBytes = (m.tileM + unitN) * kBlockK * 2;
    int64_t fit = (227 * 1024 - 1024) / stageBytes;
    ws.stages = std::max<int64_t>(2, std::min<int64_t>(fit, 7));
    return ws;
  }
  // Persistent by default where it measured faster on the H200
  // (docs/performance.md): 128x128 tiles, +11-24% on every benchmarked
  // shape (the f32 staging epilogue and the per-tile fill of 7.8 waves at
  // 4096^3 were a large share), and 128x256 tiles with a 16-bit C (with
  // the TMA-store epilogue below); otherwise off.
  int64_t outBits = m.outType.getIntOrFloatBitWidth();
  ws.persistent =
      persistent == PersistentMode::On ||
      (persistent == PersistentMode::Auto && m.tileM == 128 &&
       (m.tileN == 128 || (m.tileN == 256 && outBits == 16)));
  // The TMA-store epilogue: persistent cooperative kernels with a 16-bit C
  // and an even number of 64-column chunks per tile (the two staging
  // buffers alternate chunk by chunk across tiles); an elementwise
  // epilogue runs on the accumulator registers before the staging
  // (PersistentKernel::storeValues). Measured on the H200
  // (docs/performance.md, "The TMA-store epilogue by default"): faster than
  // the register epilogue on every GEMM shape it was tried on, 128x128 and
  // 128x256 tiles alike (32768x512x128: 0.44x -> 1.02x cuBLAS).
  // EpilogueMode::Tma also makes the kernel persistent.
  const bool tmaApplies = outBits == 16 && m.tileN % 128 == 0;
  if (epilogue == EpilogueMode::Tma && persistent != PersistentMode::Off &&
      tmaApplies)
    ws.persistent = true;
  ws.tmaStore =
      epilogue != EpilogueMode::Registers && ws.persistent && tmaApplies;
  // One consumer warpgroup per 64 accumulator rows (wgmma's M).
  ws.consumers = m.tileM / 64;
  ws.producers = 1;
  // Registers: the producer at the minimum that still issues TMA; the
  // consumers get what the CTA's allocation leaves.
  ws.producerRegs = 40;
  ws.consumerRegs = ws.consumerRegisterBudget();
  ws.blockK = kBlockK;
  // Stages: as many as fit (227 KiB less 1 KiB of
  // alignment slack), at most 5.
  int64_t stageBytes = (m.tileM + m.tileN) * kBlockK * 2;
  int64_t fit = (227 * 1024 - 1024 - ws.stagingBytes()) / stageBytes;
  ws.stages = std::max<int64_t>(2, std::min<int64_t>(fit, 5));
  return ws;
}

int64_t WarpSpecialization::consumerRegisterBudget() const {
  int64_t perThread = (65536 / threads()) / 8 * 8;
  int64_t left = perThread * threads() / 128 - producerRegs * producers;
  return std::min<int64_t>(232, (left / consumers) / 8 * 8);
}
