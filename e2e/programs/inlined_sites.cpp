// Allocations in code the compiler inlines (built -O2 -g): a chain of two small
// helpers inlined into new_buffers, and std::vector's growth inside grow_numbers.
//   inlined_sites ROUNDS
#include <cstdlib>
#include <vector>

static void* volatile sink;

static inline __attribute__((always_inline)) char* new_block(size_t n) {
  char* block = static_cast<char*>(malloc(n));
  block[0] = 1;
  return block;
}

static inline __attribute__((always_inline)) char* new_record(size_t n) {
  char* record = new_block(n + 64);
  record[1] = 2;
  return record;
}

__attribute__((noinline)) void new_buffers(int count) {
  for (int i = 0; i < count; i++) {
    char* buffer = new_record(4096 + i % 7);
    sink = buffer;
    free(buffer);
  }
}

__attribute__((noinline)) void grow_numbers(int count) {
  std::vector<long> numbers;
  for (int i = 0; i < count; i++) numbers.push_back(i);
  sink = numbers.data();
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < rounds; i++) {
    new_buffers(100);
    grow_numbers(10000);
  }
  return 0;
}
