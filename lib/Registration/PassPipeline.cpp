//===- PassPipeline.cpp - textual pipelines into a PassManager ------------===//

#include "tile/PassPipeline.h"

#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

/// "builtin.module(...)": an op name (dialect.op: pass names have no dot)
/// directly followed by '('.
static bool isAnchored(StringRef text) {
  size_t paren = text.find('(');
  if (paren == StringRef::npos)
    return false;
  StringRef head = text.take_front(paren);
  return head.contains('.') &&
         llvm::all_of(head, [](char c) {
           return llvm::isAlnum(c) || c == '.' || c == '_' || c == '$';
         });
}

LogicalResult mlir::tile::parsePassPipelineInto(StringRef pipeline,
                                                OpPassManager &pm,
                                                raw_ostream &errorStream) {
  StringRef text = pipeline.trim();
  if (!isAnchored(text))
    return parsePassPipeline(text, pm, errorStream);
  // Parse it whole first: validates the syntax and tells the anchor.
  FailureOr<OpPassManager> parsed = parsePassPipeline(text, errorStream);
  if (failed(parsed))
    return failure();
  // An op-agnostic pass manager (PassManager's default anchor, "any") runs
  // on whatever op it is given: the anchored contents are its own passes.
  if (pm.getOpAnchorName() != OpPassManager::getAnyOpAnchorName() &&
      parsed->getOpAnchorName() != pm.getOpAnchorName()) {
    errorStream << "the pipeline is anchored on '" << parsed->getOpAnchorName()
                << "' but the pass manager runs on '" << pm.getOpAnchorName()
                << "': nest it, e.g. " << pm.getOpAnchorName() << "("
                << text << ")\n";
    return failure();
  }
  // The contents of the outermost "anchor(...)" are pm's own passes.
  size_t open = text.find('(');
  int depth = 0;
  size_t close = StringRef::npos;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(')
      ++depth;
    else if (text[i] == ')' && --depth == 0) {
      close = i;
      break;
    }
  }
  if (close != text.size() - 1) {
    errorStream << "expected one anchored pipeline, got '" << text << "'\n";
    return failure();
  }
  return parsePassPipeline(text.slice(open + 1, close), pm, errorStream);
}
