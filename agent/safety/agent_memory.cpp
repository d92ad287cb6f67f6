#include "agent/safety/agent_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cerrno>
#include <cstring>

#include "agent/safety/spin_lock.h"

namespace nmprof::agent_memory {
namespace {

// In front of every block; 16 bytes keep the block 16-byte aligned.
struct Header {
  uint64_t mapping_length;  // 0: a small block
  uint32_t class_or_offset;  // small: its size class; mapped: bytes from the mapping's start to the block
  uint32_t magic;
};
static_assert(sizeof(Header) == 16);
constexpr uint32_t kMagic = 0x6e6d7066;  // "nmpf"

// Size classes hold header and block: 32 B, 64 B, ... 256 KiB.
constexpr size_t kSmallestClass = 32;
constexpr int kClasses = 14;
constexpr size_t kLargestSmall = kSmallestClass << (kClasses - 1);
constexpr size_t kSlabBytes = 1 << 20;

struct FreeBlock {
  FreeBlock* next;
};

struct Arena {
  SpinLock lock;
  FreeBlock* free_lists[kClasses];
  char* slab_next;  // the unused rest of the current slab
  char* slab_end;
};

constinit Arena g_arena{};

size_t class_bytes(int size_class) { return kSmallestClass << size_class; }

int class_of(size_t bytes_with_header) {
  int size_class = 0;
  while (class_bytes(size_class) < bytes_with_header) size_class++;
  return size_class;
}

int lock_owner_id() {
  // Any non-zero id unique to the thread: the address of its errno will do and
  // costs no system call.
  return static_cast<int>(reinterpret_cast<uintptr_t>(&errno) >> 4) | 1;
}

void* map(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

Header* header_of(const void* p) { return reinterpret_cast<Header*>(const_cast<char*>(static_cast<const char*>(p)) - sizeof(Header)); }

void* allocate_small(int size_class) {
  Arena& a = g_arena;
  a.lock.lock(lock_owner_id());
  void* block = a.free_lists[size_class];
  if (block) {
    a.free_lists[size_class] = a.free_lists[size_class]->next;
  } else {
    size_t bytes = class_bytes(size_class);
    if (a.slab_end - a.slab_next < static_cast<ptrdiff_t>(bytes)) {
      // The rest of the old slab is left unused: at most one largest class per slab.
      auto* slab = static_cast<char*>(map(kSlabBytes));
      if (slab) a.slab_next = slab, a.slab_end = slab + kSlabBytes;
    }
    if (a.slab_end - a.slab_next >= static_cast<ptrdiff_t>(bytes)) {
      block = a.slab_next;
      a.slab_next += bytes;
    }
  }
  a.lock.unlock();
  if (!block) return nullptr;
  auto* h = static_cast<Header*>(block);
  *h = {0, static_cast<uint32_t>(size_class), kMagic};
  return h + 1;
}

void* allocate_mapped(size_t size, size_t align) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t offset = align > sizeof(Header) ? align : sizeof(Header);
  if (size > SIZE_MAX - offset - page) return nullptr;
  size_t length = (offset + size + page - 1) & ~(page - 1);
  auto* mapping = static_cast<char*>(map(length));
  if (!mapping) return nullptr;
  char* block = mapping + offset;
  *header_of(block) = {length, static_cast<uint32_t>(offset), kMagic};
  return block;
}

size_t usable_size(const void* p) {
  const Header* h = header_of(p);
  return h->mapping_length ? h->mapping_length - h->class_or_offset : class_bytes(static_cast<int>(h->class_or_offset)) - sizeof(Header);
}

}  // namespace

void* allocate(size_t size, size_t align) {
  if (align & (align - 1)) return nullptr;
  // Larger alignments are rare (over-aligned types): a mapping of their own, aligned by the page.
  if (align <= sizeof(Header) && size <= kLargestSmall - sizeof(Header)) return allocate_small(class_of(size + sizeof(Header)));
  if (align > static_cast<size_t>(sysconf(_SC_PAGESIZE))) return nullptr;
  return allocate_mapped(size, align);
}

void* allocate_zeroed(size_t size) {
  void* p = allocate(size);
  // Fresh mappings are zero already; reused small blocks are not.
  if (p && !header_of(p)->mapping_length) memset(p, 0, size);
  return p;
}

void* reallocate(void* p, size_t size) {
  if (!p) return allocate(size);
  size_t old_size = usable_size(p);
  if (size <= old_size && size > old_size / 2) return p;
  void* moved = allocate(size);
  if (!moved) return nullptr;
  memcpy(moved, p, size < old_size ? size : old_size);
  release(p);
  return moved;
}

void release(void* p) {
  if (!p) return;
  Header* h = header_of(p);
  if (h->mapping_length) {
    munmap(reinterpret_cast<char*>(p) - h->class_or_offset, h->mapping_length);
    return;
  }
  Arena& a = g_arena;
  int size_class = static_cast<int>(h->class_or_offset);
  h->magic = 0;  // a second release of the same block is then not taken for ours
  auto* block = reinterpret_cast<FreeBlock*>(h);
  a.lock.lock(lock_owner_id());
  block->next = a.free_lists[size_class];
  a.free_lists[size_class] = block;
  a.lock.unlock();
}

// Reads the header in front of any block, the host's too: for those it is their
// allocator's own header, which AddressSanitizer would call out of bounds.
__attribute__((no_sanitize("address"))) bool owns(const void* p) {
  if (!p || (reinterpret_cast<uintptr_t>(p) & 15) != 0) return false;
  const Header* h = header_of(p);
  return h->magic == kMagic && (h->mapping_length ? h->class_or_offset >= sizeof(Header) : h->class_or_offset < kClasses);
}

void before_fork() { g_arena.lock.lock(lock_owner_id()); }
void after_fork() { g_arena.lock.unlock(); }
bool locked() { return g_arena.lock.owner() != 0; }

}  // namespace nmprof::agent_memory
