//===- PTXMerge.cpp - one PTX module from per-kernel PTX modules ----------===//
//
// A scanner for the top level of the PTX LLVM's NVPTX back end prints (see
// PTXMerge.h): statements end with ';' outside parentheses, function
// definitions with the '}' matching their body's '{'; comments and string
// literals are skipped while scanning. Anything it cannot name is refused,
// so that the caller generates the module whole instead of guessing.
//
//===----------------------------------------------------------------------===//

#include "tile/Target/CUDA/PTXMerge.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <optional>

using namespace mlir;

namespace {

enum class ItemKind { Variable, Prototype, Definition };

/// A top-level statement of a PTX module.
struct Item {
  ItemKind kind;
  StringRef name;
  StringRef text;
};

bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '%';
}

/// Skips a comment or a string literal starting at `i`; returns false when
/// there is none at `i`, sets `i` past the end of `text` when unterminated.
bool skipCommentOrString(StringRef text, size_t &i) {
  if (text.substr(i).starts_with("//")) {
    i = text.find('\n', i);
    if (i == StringRef::npos)
      i = text.size();
    return true;
  }
  if (text.substr(i).starts_with("/*")) {
    size_t end = text.find("*/", i + 2);
    i = end == StringRef::npos ? text.size() + 1 : end + 2;
    return true;
  }
  if (text[i] == '"') {
    for (++i; i < text.size() && text[i] != '"'; ++i)
      if (text[i] == '\\')
        ++i;
    i = i < text.size() ? i + 1 : text.size() + 1;
    return true;
  }
  return false;
}

/// The identifier that starts at or after `i` (spaces skipped).
StringRef identifierAt(StringRef text, size_t i) {
  while (i < text.size() && llvm::isSpace(text[i]))
    ++i;
  size_t end = i;
  while (end < text.size() && isIdentifierChar(text[end]))
    ++end;
  return text.slice(i, end);
}

/// Names a statement: the function after `.entry` / `.func` (past a return
/// parameter list), else the variable before its size, initializer or ';'.
StringRef nameOf(StringRef head, bool &isFunction) {
  for (StringRef keyword : {".entry", ".func"}) {
    size_t at = head.find(keyword);
    if (at == StringRef::npos || (at + keyword.size() < head.size() &&
                                  isIdentifierChar(head[at + keyword.size()])))
      continue;
    isFunction = true;
    size_t i = at + keyword.size();
    while (i < head.size() && llvm::isSpace(head[i]))
      ++i;
    if (i < head.size() && head[i] == '(') { // the return value
      int depth = 0;
      for (; i < head.size(); ++i) {
        if (head[i] == '(')
          ++depth;
        else if (head[i] == ')' && --depth == 0)
          break;
      }
      ++i;
    }
    return identifierAt(head, i);
  }
  isFunction = false;
  size_t end = head.find_first_of("[=;");
  if (end == StringRef::npos)
    end = head.size();
  size_t begin = end;
  while (begin > 0 && llvm::isSpace(head[begin - 1]))
    --begin;
  end = begin;
  while (begin > 0 && isIdentifierChar(head[begin - 1]))
    --begin;
  return head.slice(begin, end);
}

/// Splits one module into its header and its top-level statements.
LogicalResult splitModule(StringRef ptx, StringRef &header,
                          SmallVectorImpl<Item> &items, std::string &why) {
  size_t addressSize = ptx.find("\n.address_size");
  if (addressSize == StringRef::npos || !ptx.contains("\n.version") ||
      !ptx.contains("\n.target")) {
    why = "a part has no .version/.target/.address_size header";
    return failure();
  }
  size_t headerEnd = ptx.find('\n', addressSize + 1);
  headerEnd = headerEnd == StringRef::npos ? ptx.size() : headerEnd + 1;
  header = ptx.take_front(headerEnd);
  size_t i = headerEnd;
  while (i < ptx.size()) {
    if (llvm::isSpace(ptx[i])) {
      ++i;
      continue;
    }
    if (ptx[i] == '"') {
      why = "a string at the top level";
      return failure();
    }
    if (skipCommentOrString(ptx, i))
      continue;
    size_t start = i;
    // Braces after '=' are a variable's initializer, else a function body.
    int parens = 0, braces = 0;
    bool initializer = false;
    std::optional<size_t> bodyStart, end;
    while (i < ptx.size() && !end) {
      if (skipCommentOrString(ptx, i))
        continue;
      char c = ptx[i];
      if (c == '(')
        ++parens;
      else if (c == ')')
        --parens;
      else if (c == '=' && parens == 0 && braces == 0)
        initializer = true;
      else if (c == ';' && parens == 0 && braces == 0)
        end = i + 1;
      else if (c == '{' && parens == 0) {
        if (braces++ == 0 && !initializer && !bodyStart)
          bodyStart = i;
      } else if (c == '}' && parens == 0 && --braces == 0 && bodyStart)
        end = i + 1;
      ++i;
    }
    if (!end) {
      why = "an unterminated statement at the top level";
      return failure();
    }
    StringRef text = ptx.slice(start, *end);
    StringRef head = bodyStart ? ptx.slice(start, *bodyStart) : text;
    bool isFunction = false;
    StringRef name = nameOf(head, isFunction);
    if (name.empty() || (bodyStart && !isFunction)) {
      why = ("a top-level statement it cannot name: " +
             Twine(text.take_front(80).split('\n').first))
                .str();
      return failure();
    }
    items.push_back({bodyStart    ? ItemKind::Definition
                     : isFunction ? ItemKind::Prototype
                                  : ItemKind::Variable,
                     name, text});
  }
  return success();
}

StringRef kindName(ItemKind kind) {
  switch (kind) {
  case ItemKind::Variable:
    return "variable";
  case ItemKind::Prototype:
    return "declaration of function";
  case ItemKind::Definition:
    return "function";
  }
  return "";
}

} // namespace

FailureOr<std::string>
mlir::tile::cuda::mergePTXModules(ArrayRef<std::string> parts,
                                  StringRef dropPrefix, std::string &why) {
  if (parts.empty()) {
    why = "no parts";
    return failure();
  }
  StringRef header;
  SmallVector<Item> declarations, definitions;
  // One entry per (kind, name): the text the first part gave it.
  llvm::StringMap<StringRef> seen[3];
  for (const std::string &part : parts) {
    StringRef partHeader;
    SmallVector<Item> items;
    if (failed(splitModule(part, partHeader, items, why)))
      return failure();
    if (header.empty())
      header = partHeader;
    else if (partHeader != header) {
      why = "the parts' headers (.version/.target) differ";
      return failure();
    }
    for (const Item &item : items) {
      if (item.kind == ItemKind::Definition &&
          item.name.starts_with(dropPrefix))
        continue;
      auto [it, inserted] =
          seen[unsigned(item.kind)].try_emplace(item.name, item.text);
      if (!inserted) {
        if (it->second != item.text) {
          why = (Twine(kindName(item.kind)) + " '" + item.name +
                 "' differs between two kernels' modules")
                    .str();
          return failure();
        }
        continue;
      }
      (item.kind == ItemKind::Definition ? definitions : declarations)
          .push_back(item);
    }
  }
  for (const Item &item : declarations)
    if (item.kind == ItemKind::Variable &&
        seen[unsigned(ItemKind::Definition)].contains(item.name)) {
      why =
          ("'" + Twine(item.name) + "' names a variable and a function").str();
      return failure();
    }
  std::string out = header.str();
  out += "\n";
  for (const Item &item : declarations)
    out += (Twine(item.text) + "\n").str();
  for (const Item &item : definitions)
    out += ("\n" + Twine(item.text) + "\n").str();
  return out;
}
