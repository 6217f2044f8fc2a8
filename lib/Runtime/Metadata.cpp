//===- Metadata.cpp - Kernel metadata parsed into a launch plan -----------===//
#include "Metadata.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tile::rt {
namespace {

using json = nlohmann::json;

constexpr int32_t kMaxRank = 32;
constexpr size_t kMaxParams = 1024;

/// Field access that records the first problem with its JSON path instead of
/// throwing, so every malformed bundle gets one precise message.
class Parser {
public:
  explicit Parser(std::string &error) : error_(error) {}

  bool failed() const { return failed_; }

  bool fail(const std::string &path, const std::string &what) {
    if (!failed_) {
      error_ = "bundle metadata: " + path + " " + what;
      failed_ = true;
    }
    return false;
  }

  const json *get(const json &obj, const char *key, const std::string &path,
                  bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required)
        fail(path + key, "is missing");
      return nullptr;
    }
    return &*it;
  }

  bool string(const json &obj, const char *key, const std::string &path,
              std::string &out, bool required = true) {
    const json *v = get(obj, key, path, required);
    if (!v)
      return !required;
    if (!v->is_string())
      return fail(path + key, "must be a string");
    out = v->get<std::string>();
    return true;
  }

  bool integer(const json &v, const std::string &path, int64_t &out) {
    if (!v.is_number_integer())
      return fail(path, "must be an integer");
    out = v.get<int64_t>();
    return true;
  }

  bool integer(const json &obj, const char *key, const std::string &path,
               int64_t &out, bool required = true) {
    const json *v = get(obj, key, path, required);
    if (!v)
      return !required;
    return integer(*v, path + key, out);
  }

  const json *array(const json &obj, const char *key, const std::string &path,
                    bool required = true) {
    const json *v = get(obj, key, path, required);
    if (v && !v->is_array()) {
      fail(path + key, "must be an array");
      return nullptr;
    }
    return v;
  }

  const json *object(const json &obj, const char *key,
                     const std::string &path, bool required = true) {
    const json *v = get(obj, key, path, required);
    if (v && !v->is_object()) {
      fail(path + key, "must be an object");
      return nullptr;
    }
    return v;
  }

private:
  std::string &error_;
  bool failed_ = false;
};

int32_t symbolIndex(const KernelPlan &plan, const std::string &name) {
  for (size_t i = 0; i < plan.symbols.size(); ++i)
    if (plan.symbols[i] == name)
      return static_cast<int32_t>(i);
  return -1;
}

bool parseParam(Parser &p, const json &j, size_t index, ParamPlan &param,
                const KernelPlan &plan) {
  std::string path = "params[" + std::to_string(index) + "].";
  if (!j.is_object())
    return p.fail(path.substr(0, path.size() - 1), "must be an object");
  std::string kind;
  if (!p.string(j, "name", path, param.name) ||
      !p.string(j, "kind", path, kind) ||
      !p.string(j, "dtype", path, param.dtypeName))
    return false;
  if (param.name.empty())
    return p.fail(path + "name", "must not be empty");
  if (!parseDType(param.dtypeName, param.dtype))
    return p.fail(path + "dtype", "has unknown dtype '" + param.dtypeName + "'");
  param.elemBytes = elementBytes(param.dtype);
  if (kind == "scalar") {
    param.isTensor = false;
    if (param.dtypeName == "int32")
      param.scalar = ScalarType::I32;
    else if (param.dtypeName == "int64")
      param.scalar = ScalarType::I64;
    else if (param.dtypeName == "float32")
      param.scalar = ScalarType::F32;
    else if (param.dtypeName == "float64")
      param.scalar = ScalarType::F64;
    else
      return p.fail(path + "dtype", "'" + param.dtypeName +
                                        "' is not a scalar type (int32, "
                                        "int64, float32, float64)");
    return true;
  }
  if (kind != "tensor")
    return p.fail(path + "kind", "must be \"tensor\" or \"scalar\"");
  param.isTensor = true;
  int64_t rank = 0;
  if (!p.integer(j, "rank", path, rank))
    return false;
  if (rank < 0 || rank > kMaxRank)
    return p.fail(path + "rank", "must be in [0, " + std::to_string(kMaxRank) +
                                     "]");
  param.rank = static_cast<int32_t>(rank);
  const json *shape = p.array(j, "shape", path);
  const json *dims = p.array(j, "dims", path);
  if (!shape || !dims)
    return false;
  if (shape->size() != size_t(rank))
    return p.fail(path + "shape", "must have rank (" + std::to_string(rank) +
                                      ") entries");
  if (dims->size() != size_t(rank))
    return p.fail(path + "dims", "must have rank (" + std::to_string(rank) +
                                     ") entries");
  for (int64_t d = 0; d < rank; ++d) {
    std::string dpath = path + "shape[" + std::to_string(d) + "]";
    int64_t v;
    if (!p.integer((*shape)[d], dpath, v))
      return false;
    if (v < -1)
      return p.fail(dpath, "must be -1 (dynamic) or a size >= 0");
    param.shape.push_back(v);
    const json &name = (*dims)[d];
    std::string npath = path + "dims[" + std::to_string(d) + "]";
    if (!name.is_string())
      return p.fail(npath, "must be a string");
    param.dims.push_back(name.get<std::string>());
    // "" marks an unnamed static dim: it binds no symbol.
    int32_t sym = -1;
    if (!param.dims.back().empty()) {
      sym = symbolIndex(plan, param.dims.back());
      if (sym < 0)
        return p.fail(npath, "names symbol '" + param.dims.back() +
                                 "', which is not listed in 'symbols'");
    } else if (v < 0) {
      return p.fail(npath, "is empty, but only static dims may be unnamed");
    }
    param.dimSym.push_back(sym);
  }
  bool output = false;
  if (const json *o = p.get(j, "output", path, /*required=*/false)) {
    if (!o->is_boolean())
      return p.fail(path + "output", "must be a boolean");
    output = o->get<bool>();
  }
  param.output = output;
  // A bundle without "access" (older compilers) may write any tensor.
  param.access = TILE_ACCESS_READWRITE;
  if (const json *a = p.get(j, "access", path, /*required=*/false)) {
    std::string v = a->is_string() ? a->get<std::string>() : "";
    if (v == "read")
      param.access = TILE_ACCESS_READ;
    else if (v == "write")
      param.access = TILE_ACCESS_WRITE;
    else if (v != "readwrite")
      return p.fail(path + "access",
                    "must be \"read\", \"write\" or \"readwrite\"");
  }
  if (const json *ip = p.get(j, "inplace", path, /*required=*/false)) {
    if (!ip->is_boolean())
      return p.fail(path + "inplace", "must be a boolean");
    param.inplace = ip->get<bool>();
    if (param.inplace && !param.written())
      return p.fail(path + "inplace",
                    "is set, but \"access\" says the kernel never writes "
                    "the param");
  }
  return true;
}

/// The variant kinds this runtime parses (docs/bundle.md); others are
/// skipped: entry.kernel implements every launch.
constexpr const char *kKnownVariantKinds[] = {"sm90_tma_wgmma"};

bool intArray(Parser &p, const json &v, const std::string &path, size_t n,
              int64_t lo, int64_t hi, const std::string &what, int64_t *out) {
  bool ok = v.is_array() && v.size() == n;
  for (size_t i = 0; ok && i < n; ++i) {
    ok = v[i].is_number_integer() && v[i].get<int64_t>() >= lo &&
         v[i].get<int64_t>() <= hi;
    if (ok)
      out[i] = v[i].get<int64_t>();
  }
  return ok || p.fail(path, what);
}

bool parseTma(Parser &p, const json &t, const std::string &path,
              const KernelPlan &plan, TmaPlan &tma) {
  if (!t.is_object())
    return p.fail(path, "must be an object");
  auto param = t.find("param");
  if (param == t.end() || !param->is_number_integer())
    return p.fail(path + ".param", "must be an integer");
  int64_t idx = param->get<int64_t>();
  if (idx < 0 || size_t(idx) >= plan.params.size() ||
      !plan.params[size_t(idx)].isTensor)
    return p.fail(path + ".param",
                  "(" + str(idx) + ") must be the index of a tensor param");
  const ParamPlan &pp = plan.params[size_t(idx)];
  tma.param = int32_t(idx);
  if (!p.string(t, "dtype", path + ".", tma.dtype))
    return false;
  DLDataType dt;
  if (!parseDType(tma.dtype, dt) || elementBytes(dt) != pp.elemBytes)
    return p.fail(path + ".dtype", "'" + tma.dtype +
                                       "' is not a tensor map type of the "
                                       "param's dtype '" +
                                       pp.dtypeName + "'");
  auto rank = t.find("rank");
  if (rank == t.end() || !rank->is_number_integer() ||
      rank->get<int64_t>() != pp.rank || pp.rank < 1 || pp.rank > 5)
    return p.fail(path + ".rank", "must equal the param's rank (1..5)");
  tma.rank = pp.rank;
  tma.box.resize(size_t(pp.rank));
  tma.elementStrides.assign(size_t(pp.rank), 1);
  auto box = t.find("box");
  if (box == t.end())
    return p.fail(path + ".box", "is missing");
  if (!intArray(p, *box, path + ".box", size_t(pp.rank), 1, 256,
                "must be rank integers in 1..256", tma.box.data()))
    return false;
  auto es = t.find("element_strides");
  if (es != t.end() &&
      !intArray(p, *es, path + ".element_strides", size_t(pp.rank), 1, 8,
                "must be rank integers in 1..8", tma.elementStrides.data()))
    return false;
  if (const json *o = p.get(t, "optional", path + ".", /*required=*/false)) {
    if (!o->is_boolean())
      return p.fail(path + ".optional", "must be a boolean");
    tma.optional = o->get<bool>();
  }
  return p.string(t, "interleave", path + ".", tma.interleave, false) &&
         p.string(t, "swizzle", path + ".", tma.swizzle, false) &&
         p.string(t, "l2_promotion", path + ".", tma.l2Promotion, false) &&
         p.string(t, "oob_fill", path + ".", tma.oobFill, false);
}

/// Parses variants[i]; false on a malformed variant of a known kind. An
/// unknown kind leaves `known` false.
bool parseVariant(Parser &p, const json &v, size_t i, const KernelPlan &plan,
                  VariantPlan &out, bool &known) {
  std::string path = "variants[" + str(int64_t(i)) + "]";
  known = false;
  if (!v.is_object())
    return p.fail(path, "must be an object");
  if (!p.string(v, "kind", path + ".", out.kind))
    return false;
  for (const char *k : kKnownVariantKinds)
    known |= out.kind == k;
  if (!known)
    return true;
  if (!p.string(v, "chip", path + ".", out.chip) ||
      !p.string(v, "kernel", path + ".", out.kernel))
    return false;
  if (out.kernel.empty())
    return p.fail(path + ".kernel", "must not be empty");
  auto block = v.find("block");
  if (block == v.end() ||
      !intArray(p, *block, path + ".block", 3, 1, 1024,
                "must be three positive integers (at most 1024 threads)",
                out.block))
    return false;
  if (out.block[0] * out.block[1] * out.block[2] > 1024)
    return p.fail(path + ".block",
                  "must be three positive integers (at most 1024 threads)");
  auto sh = v.find("shared_bytes");
  if (sh == v.end() || !sh->is_number_integer() ||
      (out.sharedBytes = sh->get<int64_t>()) < 0 ||
      out.sharedBytes > (int64_t(1) << 30))
    return p.fail(path + ".shared_bytes", "must be an integer in [0, 2^30]");
  if (auto grid = v.find("grid"); grid != v.end()) {
    std::string g = grid->is_string() ? grid->get<std::string>() : "";
    if (g != "launch" && g != "sms")
      return p.fail(path + ".grid", "must be \"launch\" or \"sms\"");
    out.gridSms = g == "sms";
  }
  if (auto mt = v.find("max_tiles"); mt != v.end()) {
    if (!mt->is_number_integer() || mt->get<int64_t>() < 1)
      return p.fail(path + ".max_tiles", "must be a positive integer");
    out.maxTiles = mt->get<int64_t>();
  }
  if (!p.string(v, "schedule", path + ".", out.schedule, false))
    return false;
  if (auto sk = v.find("split_k"); sk != v.end()) {
    const std::string at = path + ".split_k";
    if (!sk->is_object())
      return p.fail(at, "must be an object");
    int64_t param, dim, blockK, sliceBytes;
    if (!p.integer(*sk, "k_param", at + ".", param) ||
        !p.integer(*sk, "k_dim", at + ".", dim) ||
        !p.integer(*sk, "block_k", at + ".", blockK) ||
        !p.integer(*sk, "slice_bytes", at + ".", sliceBytes))
      return false;
    if (param < 0 || size_t(param) >= plan.params.size() ||
        !plan.params[size_t(param)].isTensor)
      return p.fail(at + ".k_param",
                    "(" + str(param) + ") must be the index of a tensor param");
    if (dim < 0 || dim >= plan.params[size_t(param)].rank)
      return p.fail(at + ".k_dim", "(" + str(dim) + ") must be a dim of param " +
                                       str(param));
    if (blockK < 1 || blockK > (int64_t(1) << 20))
      return p.fail(at + ".block_k", "must be an integer in [1, 2^20]");
    if (sliceBytes < 1 || sliceBytes > (int64_t(1) << 30))
      return p.fail(at + ".slice_bytes", "must be an integer in [1, 2^30]");
    out.kParam = int32_t(param), out.kDim = int32_t(dim), out.blockK = blockK;
    out.sliceBytes = sliceBytes;
  }
  if (auto wb = v.find("workspace_bytes"); wb != v.end()) {
    if (!wb->is_number_integer() || wb->get<int64_t>() < 0 ||
        wb->get<int64_t>() > (int64_t(1) << 40))
      return p.fail(path + ".workspace_bytes",
                    "must be an integer in [0, 2^40]");
    out.workspaceBytes = wb->get<int64_t>();
  }
  // "pack" (one operand per launch) or "pack2" (two argument groups, one
  // launch for A and B): a separate key, so that a runtime which knows only
  // "pack" ignores a two-operand kernel instead of launching it with six
  // arguments.
  auto pk = v.find("pack");
  out.packOperands = 1;
  if (auto pk2 = v.find("pack2"); pk2 != v.end()) {
    if (pk != v.end())
      return p.fail(path + ".pack2", "cannot be combined with pack");
    pk = pk2;
    out.packOperands = 2;
  }
  if (pk != v.end()) {
    const std::string at = path + (out.packOperands == 2 ? ".pack2" : ".pack");
    if (!pk->is_object())
      return p.fail(at, "must be an object");
    int64_t eb;
    if (!p.string(*pk, "kernel", at + ".", out.packKernel) ||
        !p.integer(*pk, "elem_bytes", at + ".", eb))
      return false;
    if (out.packKernel.empty() || out.packKernel == out.kernel ||
        out.packKernel == plan.entryKernel)
      return p.fail(at + ".kernel",
                    "must name a kernel other than the variant's and the "
                    "entry's");
    if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
      return p.fail(at + ".elem_bytes", "must be 1, 2, 4 or 8");
    out.packElemBytes = int32_t(eb);
  }
  if (auto c = v.find("coarsen"); c != v.end()) {
    if (!intArray(p, *c, path + ".coarsen", 3, 1, 65535,
                  "must be three integers in [1, 65535]", out.coarsen))
      return false;
    if (out.kParam >= 0)
      return p.fail(path + ".coarsen", "cannot be combined with split_k");
  }
  if (auto cs = v.find("coarse_speedup"); cs != v.end()) {
    const std::string at = path + ".coarse_speedup";
    if (!cs->is_number_integer() || cs->get<int64_t>() < 100 ||
        cs->get<int64_t>() > 10000)
      return p.fail(at, "must be an integer in [100, 10000]");
    if (v.find("coarsen") == v.end())
      return p.fail(at, "needs coarsen");
    out.coarseSpeedup = cs->get<int64_t>();
  }
  if (auto sp = v.find("split"); sp != v.end()) {
    const std::string at = path + ".split";
    if (!sp->is_number_integer() || sp->get<int64_t>() < 2 ||
        sp->get<int64_t>() > 64)
      return p.fail(at, "must be an integer in [2, 64]");
    if (v.find("coarsen") == v.end() || !out.gridSms)
      return p.fail(at, "needs coarsen and \"grid\": \"sms\"");
    out.split = sp->get<int64_t>();
  }
  if (auto mr = v.find("max_rows"); mr != v.end()) {
    const std::string at = path + ".max_rows";
    if (!mr->is_object())
      return p.fail(at, "must be an object");
    int64_t rows;
    if (!p.integer(*mr, "rows", at + ".", rows))
      return false;
    if (rows < 1 || rows > (int64_t(1) << 30))
      return p.fail(at + ".rows", "must be an integer in [1, 2^30]");
    const json *params = p.array(*mr, "params", at + ".");
    if (!params)
      return false;
    if (params->empty())
      return p.fail(at + ".params", "must list at least one tensor param");
    for (const json &q : *params) {
      const int64_t i = q.is_number_integer() ? q.get<int64_t>() : -1;
      if (i < 0 || size_t(i) >= plan.params.size() ||
          !plan.params[size_t(i)].isTensor || plan.params[size_t(i)].rank < 1)
        return p.fail(at + ".params",
                      "must be indices of tensor params of rank >= 1");
      out.rowParams.push_back(int32_t(i));
    }
    out.maxRows = rows;
  }
  // Split-K is for grids smaller than the device, unless the variant is a
  // narrow one (max_rows), whose own cost model decides.
  if (out.kParam >= 0 && out.maxTiles < 1 && out.maxRows < 1)
    return p.fail(path + ".split_k",
                  "needs max_tiles or max_rows (split-K is for grids smaller "
                  "than the device, or for narrow launches)");
  const json *tma = p.array(v, "tma", path + ".");
  if (!tma)
    return false;
  out.tma.resize(tma->size());
  for (size_t j = 0; j < tma->size(); ++j)
    if (!parseTma(p, (*tma)[j], path + ".tma[" + str(int64_t(j)) + "]", plan,
                  out.tma[j]))
      return false;
  return true;
}

bool parseGridExpr(Parser &p, const json &j, const std::string &path,
                   const KernelPlan &plan, GridExpr &expr, int depth) {
  if (depth > GridExpr::kMaxDepth)
    return p.fail(path, "is nested too deeply");
  if (!j.is_object())
    return p.fail(path, "must be an object");
  if (const json *c = p.get(j, "const", path + ".", false)) {
    int64_t v;
    if (!p.integer(*c, path + ".const", v))
      return false;
    expr.push(GridOp::Const, v);
    return true;
  }
  if (const json *s = p.get(j, "sym", path + ".", false)) {
    if (!s->is_string())
      return p.fail(path + ".sym", "must be a string");
    int32_t sym = symbolIndex(plan, s->get<std::string>());
    if (sym < 0)
      return p.fail(path + ".sym", "names unknown symbol '" +
                                       s->get<std::string>() + "'");
    // A symbol only outputs bind is unbound whenever they are omitted, so
    // the grid may only use symbols some tensor parameter binds.
    expr.push(GridOp::Sym, sym);
    return true;
  }
  if (const json *s = p.get(j, "scalar", path + ".", false)) {
    int64_t idx;
    if (!p.integer(*s, path + ".scalar", idx))
      return false;
    if (idx < 0 || size_t(idx) >= plan.params.size() ||
        plan.params[idx].isTensor)
      return p.fail(path + ".scalar", "must be the index of a scalar param");
    ScalarType t = plan.params[idx].scalar;
    if (t != ScalarType::I32 && t != ScalarType::I64)
      return p.fail(path + ".scalar", "must refer to an integer scalar");
    expr.push(GridOp::Scalar, idx);
    return true;
  }
  std::string opName;
  if (!p.string(j, "op", path + ".", opName, /*required=*/false))
    return false;
  if (opName.empty())
    return p.fail(path, "must have one of const, sym, scalar, op");
  GridOp op;
  if (!parseGridOp(opName, op))
    return p.fail(path + ".op", "is unknown ('" + opName + "')");
  const json *args = p.array(j, "args", path + ".");
  if (!args)
    return false;
  if (args->size() != 2)
    return p.fail(path + ".args", "must have two entries");
  for (int i = 0; i < 2; ++i)
    if (!parseGridExpr(p, (*args)[i], path + ".args[" + std::to_string(i) + "]",
                       plan, expr, depth + 1))
      return false;
  expr.push(op);
  return true;
}

size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

void layoutFrame(KernelPlan &plan) {
  const size_t np = plan.params.size(), ptr = sizeof(void *);
  FrameLayout &f = plan.frame;
  size_t off = 0;
  f.args = off, off += np * ptr;
  f.tensors = off, off += np * ptr;
  f.scalarPtrs = off, off += np * ptr;
  f.allocated = off, off += np * ptr;
  f.syms = off, off += plan.symbols.size() * 8;
  f.scalarInts = off, off += np * 8;
  f.slots = off = alignUp(off, 16);
  for (ParamPlan &param : plan.params) {
    param.slotOffset = off;
    off += param.isTensor ? 8 * TILE_MEMREF_WORDS(param.rank) : 8;
  }
  f.total = alignUp(off, 16);
}

} // namespace

bool parseMetadata(std::string_view text, KernelPlan &plan,
                   std::string &error) {
  plan = KernelPlan();
  plan.metadataText.assign(text.data(), text.size());
  json root = json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = "bundle metadata is not valid JSON";
    return false;
  }
  if (!root.is_object()) {
    error = "bundle metadata must be a JSON object";
    return false;
  }
  Parser p(error);
  std::string format;
  int64_t version = 0;
  if (!p.string(root, "format", "", format) ||
      !p.integer(root, "version", "", version))
    return false;
  if (format != "tile-kernel")
    return p.fail("format", "must be \"tile-kernel\" (got \"" + format + "\")");
  if (version != 1)
    return p.fail("version", std::to_string(version) +
                                 " is not supported (this runtime reads 1)");
  p.string(root, "compiler", "", plan.compiler, false);
  if (!p.string(root, "name", "", plan.name))
    return false;

  const json *target = p.object(root, "target", "");
  if (!target || !p.string(*target, "kind", "target.", plan.targetKindName) ||
      !p.string(*target, "chip", "target.", plan.targetChip, false) ||
      !p.string(*target, "features", "target.", plan.targetFeatures, false))
    return false;
  tile_target_kind kind;
  if (!tile_target_parse(plan.targetKindName.c_str(), &kind)) {
    std::string known;
    for (int i = 0; i < TILE_TARGET_COUNT; ++i)
      known += (i ? ", " : "") +
               std::string(tile_target_name(static_cast<tile_target_kind>(i)));
    return p.fail("target.kind",
                  "'" + plan.targetKindName + "' is unknown (" + known + ")");
  }
  plan.target = static_cast<TargetKind>(kind);
  switch (kind) {
#define TILE_X(id, name, device)                                               \
  case TILE_TARGET_##id:                                                       \
    plan.deviceType = device;                                                  \
    break;
    TILE_TARGETS(TILE_X)
#undef TILE_X
  case TILE_TARGET_COUNT:
    break;
  }

  // Symbols first: params refer to them by name.
  const json *symbols = p.array(root, "symbols", "");
  if (!symbols)
    return false;
  for (size_t i = 0; i < symbols->size(); ++i) {
    const json &s = (*symbols)[i];
    std::string path = "symbols[" + std::to_string(i) + "]";
    if (!s.is_string())
      return p.fail(path, "must be a string");
    if (symbolIndex(plan, s.get<std::string>()) >= 0)
      return p.fail(path, "repeats '" + s.get<std::string>() + "'");
    plan.symbols.push_back(s.get<std::string>());
  }

  const json *params = p.array(root, "params", "");
  if (!params)
    return false;
  if (params->size() > kMaxParams)
    return p.fail("params", "has more than " + std::to_string(kMaxParams) +
                                " entries");
  plan.params.resize(params->size());
  for (size_t i = 0; i < params->size(); ++i) {
    if (!parseParam(p, (*params)[i], i, plan.params[i], plan))
      return false;
    for (size_t k = 0; k < i; ++k)
      if (plan.params[k].name == plan.params[i].name)
        return p.fail("params[" + std::to_string(i) + "].name",
                      "repeats '" + plan.params[i].name + "'");
  }
  for (ParamPlan &param : plan.params) {
    for (const std::string &d : param.dims)
      param.dimPtrs.push_back(d.c_str());
    plan.anyWritten |= param.isTensor && param.written();
  }

  const json *outIdx = p.array(root, "out_idx", "");
  if (!outIdx)
    return false;
  for (size_t i = 0; i < outIdx->size(); ++i) {
    std::string path = "out_idx[" + std::to_string(i) + "]";
    int64_t idx;
    if (!p.integer((*outIdx)[i], path, idx))
      return false;
    if (idx < 0 || size_t(idx) >= plan.params.size() ||
        !plan.params[idx].isTensor)
      return p.fail(path, "(" + std::to_string(idx) +
                              ") must be the index of a tensor param");
    if (plan.params[idx].outSlot >= 0)
      return p.fail(path, "repeats param " + std::to_string(idx));
    plan.params[idx].outSlot = static_cast<int32_t>(i);
    plan.outIdx.push_back(static_cast<int32_t>(idx));
  }
  for (size_t i = 0; i < plan.params.size(); ++i)
    if (plan.params[i].outSlot < 0)
      plan.inputParams.push_back(static_cast<int32_t>(i));

  const json *grid = p.array(root, "grid", "");
  if (!grid)
    return false;
  if (grid->size() != 3)
    return p.fail("grid", "must have three entries");
  for (int i = 0; i < 3; ++i) {
    std::string path = "grid[" + std::to_string(i) + "]";
    if (!parseGridExpr(p, (*grid)[i], path, plan, plan.grid[i], 0))
      return false;
    if (!plan.grid[i].finalize())
      return p.fail(path, "is malformed or too deep");
    for (const GridInstr &in : plan.grid[i].code()) {
      if (in.op != GridOp::Sym)
        continue;
      bool bound = false;
      for (const ParamPlan &param : plan.params)
        bound |= std::count(param.dimSym.begin(), param.dimSym.end(),
                            in.imm) > 0;
      if (!bound)
        return p.fail(path, "uses symbol '" + plan.symbols[in.imm] +
                                "', which no tensor dim binds");
    }
  }

  if (const json *block = p.array(root, "block", "", false)) {
    if (block->size() != 3)
      return p.fail("block", "must have three entries");
    for (int i = 0; i < 3; ++i)
      if (!p.integer((*block)[i], "block[" + std::to_string(i) + "]",
                     plan.block[i]))
        return false;
  }
  if (!p.integer(root, "shared_bytes", "", plan.sharedBytes, false))
    return false;

  const json *entry = p.object(root, "entry", "");
  if (!entry ||
      !p.string(*entry, "blocks", "entry.", plan.entryBlocks,
                plan.target == TargetKind::Cpu) ||
      !p.string(*entry, "native", "entry.", plan.entryNative, false) ||
      !p.string(*entry, "kernel", "entry.", plan.entryKernel, false))
    return false;
  if (const json *variants = p.array(root, "variants", "", false)) {
    for (size_t i = 0; i < variants->size(); ++i) {
      VariantPlan v;
      bool known;
      if (!parseVariant(p, (*variants)[i], i, plan, v, known))
        return false;
      if (known)
        plan.variants.push_back(std::move(v));
    }
  }
  if (p.failed())
    return false;
  // C-API views, now that nothing moves any more.
  for (int i = 0; i < 3; ++i)
    plan.gridText[i] = plan.grid[i].format(plan.symbols);
  for (VariantPlan &v : plan.variants)
    for (const TmaPlan &t : v.tma)
      v.tmaInfo.push_back({t.param, t.rank, t.dtype.c_str(), t.box.data(),
                           t.elementStrides.data(), t.interleave.c_str(),
                           t.swizzle.c_str(), t.l2Promotion.c_str(),
                           t.oobFill.c_str()});
  layoutFrame(plan);
  return true;
}

} // namespace tile::rt
