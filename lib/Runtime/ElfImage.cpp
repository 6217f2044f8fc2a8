//===- ElfImage.cpp - Structural checks of a shared object before dlopen --===//
#include "ElfImage.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <elf.h>

#ifndef DT_RELRSZ
#define DT_RELRSZ 35
#define DT_RELR 36
#endif

namespace tile::rt::elf {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "ElfImage reads little-endian ELF on a little-endian host");

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "ElfImage: add this host's ELF machine"
#endif

// Bounds on what a kernel's host code can reasonably need; they keep every
// walk below short and every size computation far from overflow.
constexpr uint64_t kMaxSegmentBytes = uint64_t(1) << 32;
constexpr uint64_t kMaxSymbols = uint64_t(1) << 20;
constexpr uint64_t kMaxVersionEntries = 1 << 12;

template <typename T> T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// [offset, offset + size) inside [0, total) without overflow.
bool inside(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

std::string_view Image::fileBytes(uint64_t vaddr, uint64_t size) const {
  for (const Segment &s : loads_)
    if (vaddr >= s.vaddr && inside(vaddr - s.vaddr, size, s.filesz))
      return bytes_.substr(s.offset + (vaddr - s.vaddr), size);
  return {};
}

bool Image::inImage(uint64_t vaddr, uint64_t size) const {
  for (const Segment &s : loads_)
    if (vaddr >= s.vaddr && inside(vaddr - s.vaddr, size, s.memsz))
      return true;
  return false;
}

bool Image::isCode(const Symbol &s) const {
  for (const Segment &seg : loads_)
    if ((seg.flags & PF_X) && s.value >= seg.vaddr &&
        inside(s.value - seg.vaddr, s.size, seg.memsz))
      return true;
  return false;
}

std::string_view Image::contents(const Symbol &s) const {
  return s.size ? fileBytes(s.value, s.size) : std::string_view();
}

const Symbol *Image::find(std::string_view name) const {
  for (const Symbol &s : symbols_)
    if (s.name == name)
      return &s;
  return nullptr;
}

bool Image::parse(std::string_view bytes, std::string &error) {
  bytes_ = bytes;
  loads_.clear();
  symbols_.clear();
  const uint64_t size = bytes.size();
  if (size < sizeof(Elf64_Ehdr)) {
    error = "is not an ELF file (" + std::to_string(size) + " bytes)";
    return false;
  }
  const auto eh = load<Elf64_Ehdr>(bytes.data());
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    error = "is not an ELF file (bad magic)";
    return false;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT) {
    error = "is not a 64-bit little-endian ELF file of version 1";
    return false;
  }
  if (eh.e_type != ET_DYN) {
    error = "is not a shared object (ELF type " + std::to_string(eh.e_type) +
            ")";
    return false;
  }
  if (eh.e_machine != kHostMachine) {
    error = "is for ELF machine " + std::to_string(eh.e_machine) +
            ", not this host's (" + std::to_string(kHostMachine) + ")";
    return false;
  }
  if (eh.e_ehsize != sizeof(Elf64_Ehdr) ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
      eh.e_phnum >= PN_XNUM ||
      !inside(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr), size)) {
    error = "has a malformed or truncated program header table";
    return false;
  }
  // Section headers: the loader ignores them, but a table past the end is
  // the plainest sign of a truncated file.
  if (eh.e_shnum == 0 ? eh.e_shoff != 0
                      : (eh.e_shentsize != sizeof(Elf64_Shdr) ||
                         !inside(eh.e_shoff,
                                 uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr),
                                 size) ||
                         (eh.e_shstrndx != SHN_UNDEF &&
                          eh.e_shstrndx >= eh.e_shnum))) {
    error = "has a malformed or truncated section header table (the file "
            "is " + std::to_string(size) + " bytes)";
    return false;
  }
  for (uint16_t i = 1; i < eh.e_shnum; ++i) {
    const auto sh =
        load<Elf64_Shdr>(bytes.data() + eh.e_shoff + i * sizeof(Elf64_Shdr));
    if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL &&
        !inside(sh.sh_offset, sh.sh_size, size)) {
      error = "is truncated: section " + std::to_string(i) + " [" +
              hex(sh.sh_offset) + ", +" + hex(sh.sh_size) +
              ") ends past the end of the file (" + std::to_string(size) +
              " bytes)";
      return false;
    }
  }

  const Elf64_Phdr *dynamic = nullptr;
  Elf64_Phdr dynamicCopy{};
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    const auto ph =
        load<Elf64_Phdr>(bytes.data() + eh.e_phoff + i * sizeof(Elf64_Phdr));
    if (ph.p_filesz && !inside(ph.p_offset, ph.p_filesz, size)) {
      error = "is truncated: program header " + std::to_string(i) + " [" +
              hex(ph.p_offset) + ", +" + hex(ph.p_filesz) +
              ") ends past the end of the file (" + std::to_string(size) +
              " bytes)";
      return false;
    }
    if (ph.p_type == PT_DYNAMIC) {
      if (dynamic) {
        error = "has two PT_DYNAMIC program headers";
        return false;
      }
      dynamicCopy = ph;
      dynamic = &dynamicCopy;
    }
    if (ph.p_type != PT_LOAD)
      continue;
    if (ph.p_filesz > ph.p_memsz || ph.p_memsz > kMaxSegmentBytes ||
        ph.p_vaddr > kMaxSegmentBytes * 16 ||
        (ph.p_align & (ph.p_align - 1)) != 0) {
      error = "has a malformed PT_LOAD (program header " + std::to_string(i) +
              ")";
      return false;
    }
    if (!loads_.empty() &&
        ph.p_vaddr < loads_.back().vaddr + loads_.back().memsz) {
      error = "has PT_LOAD segments out of order or overlapping";
      return false;
    }
    loads_.push_back(
        {ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags});
  }
  if (loads_.empty()) {
    error = "has no PT_LOAD segment";
    return false;
  }
  if (!dynamic) {
    error = "has no dynamic section (PT_DYNAMIC)";
    return false;
  }
  // The loader reads the dynamic table from the mapped image.
  if (fileBytes(dynamic->p_vaddr, dynamic->p_filesz).size() !=
          dynamic->p_filesz ||
      !inside(dynamic->p_offset, dynamic->p_filesz, size)) {
    error = "has a dynamic section outside its loaded segments";
    return false;
  }
  return checkDynamic(dynamic->p_vaddr, dynamic->p_filesz, error);
}

bool Image::checkDynamic(uint64_t vaddr, uint64_t dynSize,
                         std::string &error) {
  std::string_view table = fileBytes(vaddr, dynSize);
  uint64_t tag[DT_RELR + 1] = {};
  bool have[DT_RELR + 1] = {};
  uint64_t gnuHash = 0, verSym = 0, verNeed = 0, verNeedNum = 0, verDef = 0,
           verDefNum = 0;
  std::vector<uint64_t> strings; // DT_NEEDED, DT_SONAME, ... offsets
  bool terminated = false;
  for (size_t off = 0; off + sizeof(Elf64_Dyn) <= table.size();
       off += sizeof(Elf64_Dyn)) {
    const auto d = load<Elf64_Dyn>(table.data() + off);
    if (d.d_tag == DT_NULL) {
      terminated = true;
      break;
    }
    uint64_t v = d.d_un.d_val;
    if (d.d_tag >= 0 && d.d_tag <= DT_RELR) {
      tag[d.d_tag] = v;
      have[d.d_tag] = true;
    }
    switch (d.d_tag) {
    case DT_NEEDED:
    case DT_SONAME:
    case DT_RPATH:
    case DT_RUNPATH:
      strings.push_back(v);
      break;
    case DT_GNU_HASH: gnuHash = v; break;
    case DT_VERSYM: verSym = v; break;
    case DT_VERNEED: verNeed = v; break;
    case DT_VERNEEDNUM: verNeedNum = v; break;
    case DT_VERDEF: verDef = v; break;
    case DT_VERDEFNUM: verDefNum = v; break;
    default: break;
    }
  }
  if (!terminated) {
    error = "has a dynamic table without DT_NULL";
    return false;
  }
  auto bad = [&](const char *what) {
    error = std::string("has a dynamic table whose ") + what +
            " lies outside the file's loaded bytes (truncated or corrupt)";
    return false;
  };

  // Strings.
  if (!have[DT_STRTAB] || !have[DT_SYMTAB])
    return bad("DT_STRTAB / DT_SYMTAB (missing)");
  std::string_view strtab = fileBytes(tag[DT_STRTAB], tag[DT_STRSZ]);
  if (strtab.empty() || strtab.back() != '\0')
    return bad("string table");
  for (uint64_t s : strings)
    if (s >= strtab.size())
      return bad("DT_NEEDED / DT_SONAME string");
  if (have[DT_SYMENT] && tag[DT_SYMENT] != sizeof(Elf64_Sym))
    return bad("DT_SYMENT (wrong entry size)");

  // The number of dynamic symbols, from the hash table(s) the loader uses.
  uint64_t nsyms = 0;
  if (have[DT_HASH]) {
    std::string_view h = fileBytes(tag[DT_HASH], 8);
    if (h.empty())
      return bad("DT_HASH");
    uint32_t nbucket = load<uint32_t>(h.data()),
             nchain = load<uint32_t>(h.data() + 4);
    if (nchain > kMaxSymbols ||
        fileBytes(tag[DT_HASH], 8 + 4 * (uint64_t(nbucket) + nchain)).empty())
      return bad("DT_HASH");
    std::string_view all =
        fileBytes(tag[DT_HASH], 8 + 4 * (uint64_t(nbucket) + nchain));
    for (uint64_t i = 0; i < uint64_t(nbucket) + nchain; ++i)
      if (load<uint32_t>(all.data() + 8 + 4 * i) >= nchain)
        return bad("DT_HASH (a symbol index past the table)");
    nsyms = nchain;
  }
  if (gnuHash) {
    std::string_view h = fileBytes(gnuHash, 16);
    if (h.empty())
      return bad("DT_GNU_HASH");
    uint32_t nbuckets = load<uint32_t>(h.data()),
             symoffset = load<uint32_t>(h.data() + 4),
             bloomSize = load<uint32_t>(h.data() + 8);
    if (nbuckets == 0 || bloomSize == 0 || (bloomSize & (bloomSize - 1)) ||
        symoffset > kMaxSymbols || nbuckets > kMaxSymbols ||
        bloomSize > kMaxSymbols)
      return bad("DT_GNU_HASH (header)");
    uint64_t bucketsAt = gnuHash + 16 + 8 * uint64_t(bloomSize);
    std::string_view buckets = fileBytes(bucketsAt, 4 * uint64_t(nbuckets));
    if (buckets.empty())
      return bad("DT_GNU_HASH (buckets)");
    uint64_t chainsAt = bucketsAt + 4 * uint64_t(nbuckets);
    uint64_t maxIndex = symoffset;
    for (uint32_t b = 0; b < nbuckets; ++b) {
      uint32_t first = load<uint32_t>(buckets.data() + 4 * b);
      if (first == 0)
        continue;
      if (first < symoffset)
        return bad("DT_GNU_HASH (a bucket before symoffset)");
      // Walk the chain to its end marker (low bit set), all in the file.
      for (uint64_t i = first;; ++i) {
        if (i - symoffset >= kMaxSymbols)
          return bad("DT_GNU_HASH (an endless chain)");
        std::string_view c = fileBytes(chainsAt + 4 * (i - symoffset), 4);
        if (c.empty())
          return bad("DT_GNU_HASH (chains)");
        maxIndex = std::max(maxIndex, i + 1);
        if (load<uint32_t>(c.data()) & 1)
          break;
      }
    }
    if (have[DT_HASH] && maxIndex > nsyms)
      return bad("DT_GNU_HASH (more symbols than DT_HASH)");
    nsyms = std::max(nsyms, maxIndex);
  }
  if (!have[DT_HASH] && !gnuHash)
    return bad("symbol hash table (missing)");
  std::string_view symtab =
      fileBytes(tag[DT_SYMTAB], nsyms * sizeof(Elf64_Sym));
  if (nsyms && symtab.empty())
    return bad("symbol table");
  if (verSym && fileBytes(verSym, 2 * nsyms).size() != 2 * nsyms)
    return bad("DT_VERSYM");

  // Relocations: the loader writes at r_offset and reads symbol r_sym.
  auto checkRela = [&](uint64_t at, uint64_t bytes) -> bool {
    if (bytes % sizeof(Elf64_Rela))
      return false;
    std::string_view r = fileBytes(at, bytes);
    if (r.size() != bytes)
      return false;
    for (uint64_t o = 0; o < bytes; o += sizeof(Elf64_Rela)) {
      const auto rel = load<Elf64_Rela>(r.data() + o);
      uint64_t sym = ELF64_R_SYM(rel.r_info);
      if (!inImage(rel.r_offset, 8) || (sym != 0 && sym >= nsyms))
        return false;
    }
    return true;
  };
  if (have[DT_RELAENT] && tag[DT_RELAENT] != sizeof(Elf64_Rela))
    return bad("DT_RELAENT (wrong entry size)");
  if (have[DT_RELA] && !checkRela(tag[DT_RELA], tag[DT_RELASZ]))
    return bad("DT_RELA relocations");
  if (have[DT_JMPREL] &&
      (tag[DT_PLTREL] != DT_RELA || !checkRela(tag[DT_JMPREL], tag[DT_PLTRELSZ])))
    return bad("DT_JMPREL relocations");
  if (have[DT_REL])
    return bad("DT_REL (REL relocations are not used on this host)");
  if (have[DT_RELR]) {
    std::string_view r = fileBytes(tag[DT_RELR], tag[DT_RELRSZ]);
    if (r.size() != tag[DT_RELRSZ] || r.size() % 8)
      return bad("DT_RELR relocations");
    uint64_t base = 0;
    for (size_t o = 0; o < r.size(); o += 8) {
      uint64_t e = load<uint64_t>(r.data() + o);
      if ((e & 1) == 0) {
        if (!inImage(e, 8))
          return bad("DT_RELR relocations");
        base = e + 8;
        continue;
      }
      for (uint64_t bit = 1; bit < 64; ++bit)
        if ((e >> bit) & 1)
          if (!inImage(base + (bit - 1) * 8, 8))
            return bad("DT_RELR relocations");
      base += 63 * 8;
    }
  }

  // Constructors and destructors the loader calls.
  for (auto [arr, sz] : {std::pair{DT_INIT_ARRAY, DT_INIT_ARRAYSZ},
                         std::pair{DT_FINI_ARRAY, DT_FINI_ARRAYSZ},
                         std::pair{DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ}})
    if (have[arr] && (tag[sz] % 8 || !inImage(tag[arr], tag[sz])))
      return bad("init/fini array");
  for (int fn : {DT_INIT, DT_FINI})
    if (have[fn] && !isCode(Symbol{{}, 0, 0, 0, 0, tag[fn], 1}))
      return bad("DT_INIT / DT_FINI");

  // Symbol versions: chains of entries, each with a chain of aux entries,
  // all in the file; names in the string table.
  auto checkVerneed = [&](uint64_t at, uint64_t count) -> bool {
    for (uint64_t i = 0; i < count && i < kMaxVersionEntries; ++i) {
      std::string_view e = fileBytes(at, sizeof(Elf64_Verneed));
      if (e.empty())
        return false;
      const auto vn = load<Elf64_Verneed>(e.data());
      if (vn.vn_file >= strtab.size())
        return false;
      uint64_t a = at + vn.vn_aux;
      for (uint16_t j = 0; j < vn.vn_cnt; ++j) {
        std::string_view x = fileBytes(a, sizeof(Elf64_Vernaux));
        if (x.empty())
          return false;
        const auto aux = load<Elf64_Vernaux>(x.data());
        if (aux.vna_name >= strtab.size())
          return false;
        if (aux.vna_next == 0)
          break;
        a += aux.vna_next;
      }
      if (vn.vn_next == 0)
        return true;
      at += vn.vn_next;
    }
    return count <= kMaxVersionEntries;
  };
  auto checkVerdef = [&](uint64_t at, uint64_t count) -> bool {
    for (uint64_t i = 0; i < count && i < kMaxVersionEntries; ++i) {
      std::string_view e = fileBytes(at, sizeof(Elf64_Verdef));
      if (e.empty())
        return false;
      const auto vd = load<Elf64_Verdef>(e.data());
      uint64_t a = at + vd.vd_aux;
      for (uint16_t j = 0; j < vd.vd_cnt; ++j) {
        std::string_view x = fileBytes(a, sizeof(Elf64_Verdaux));
        if (x.empty())
          return false;
        const auto aux = load<Elf64_Verdaux>(x.data());
        if (aux.vda_name >= strtab.size())
          return false;
        if (aux.vda_next == 0)
          break;
        a += aux.vda_next;
      }
      if (vd.vd_next == 0)
        return true;
      at += vd.vd_next;
    }
    return count <= kMaxVersionEntries;
  };
  if (verNeed && !checkVerneed(verNeed, verNeedNum))
    return bad("DT_VERNEED");
  if (verDef && !checkVerdef(verDef, verDefNum))
    return bad("DT_VERDEF");

  // The defined symbols, with names checked against the string table.
  for (uint64_t i = 1; i < nsyms; ++i) {
    const auto s = load<Elf64_Sym>(symtab.data() + i * sizeof(Elf64_Sym));
    if (s.st_name >= strtab.size())
      return bad("symbol name");
    if (s.st_shndx == SHN_UNDEF)
      continue;
    std::string_view name(strtab.data() + s.st_name);
    symbols_.push_back({name, uint8_t(ELF64_ST_TYPE(s.st_info)),
                        uint8_t(ELF64_ST_BIND(s.st_info)),
                        uint8_t(ELF64_ST_VISIBILITY(s.st_other)), s.st_shndx,
                        s.st_value, s.st_size});
  }
  return true;
}

} // namespace tile::rt::elf
