//===- ElfImage.h - Structural checks of a shared object before dlopen ----===//
//
// dlopen() trusts the file it maps: a truncated host.so makes the loader
// map pages past the end of the file (SIGBUS on first touch), a section or
// dynamic-table pointer past the end makes it read wild memory. ElfImage
// checks, in plain C++ on the bytes, everything the loader will follow
// before it is asked to: the ELF header (64-bit, little-endian, ET_DYN, this
// host's machine), program and section header tables inside the file, every
// PT_LOAD's file part inside the file, the dynamic table and the tables it
// points to inside loaded file bytes, relocation targets inside the loaded
// image; and it reads the dynamic symbol table, so the runtime can check the
// entry points' kinds and the metadata hash without running the library.
//
// What it cannot check is the code itself (docs/bundle.md, "Trust model").
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_ELFIMAGE_H
#define TILE_LIB_RUNTIME_ELFIMAGE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tile::rt::elf {

struct Symbol {
  std::string_view name;
  uint8_t type = 0;       // STT_*
  uint8_t binding = 0;    // STB_*
  uint8_t visibility = 0; // STV_*
  uint16_t section = 0;   // st_shndx
  uint64_t value = 0, size = 0;
};

class Image {
public:
  /// Checks `bytes` (which must outlive the Image) as a shared object for
  /// this host. False with a message naming the first problem.
  bool parse(std::string_view bytes, std::string &error);

  /// The defined dynamic symbols (exported or not), in table order.
  const std::vector<Symbol> &symbols() const { return symbols_; }
  /// The defined dynamic symbol `name`, or nullptr.
  const Symbol *find(std::string_view name) const;
  /// True if [value, value + size) lies in an executable PT_LOAD.
  bool isCode(const Symbol &s) const;
  /// The initialized bytes of a data symbol (its file contents), or an
  /// empty view when they are not all in the file (.bss, out of range).
  std::string_view contents(const Symbol &s) const;

private:
  struct Segment {
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags;
  };
  /// The file bytes behind [vaddr, vaddr + size), or an empty view.
  std::string_view fileBytes(uint64_t vaddr, uint64_t size) const;
  bool inImage(uint64_t vaddr, uint64_t size) const;
  bool checkDynamic(uint64_t vaddr, uint64_t size, std::string &error);

  std::string_view bytes_;
  std::vector<Segment> loads_;
  std::vector<Symbol> symbols_;
};

} // namespace tile::rt::elf

#endif // TILE_LIB_RUNTIME_ELFIMAGE_H
