// One allocating function with a long C++ name (namespaces, templates, parameters,
// a GCC clone suffix) reached from two callers: its stacks differ only in the caller.
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace company::service::storage {

struct Options {
  int a;
};

using Entries = std::map<std::string, std::vector<std::string>>;

template <typename K, typename V>
struct Index {
  __attribute__((noinline)) void* insert_entries(const Entries& entries, const Options& options,
                                                 std::vector<std::pair<K, V>>* out, int n) {
    void* p = malloc(n + entries.size() + options.a + (out ? 1 : 0));
    asm volatile("" ::: "memory");
    return p;
  }
};

}  // namespace company::service::storage

using namespace company::service::storage;
using StringIndex = Index<std::string, std::vector<int>>;

__attribute__((noinline)) void* caller_a(StringIndex& index, int n) {
  Entries entries;
  void* p = index.insert_entries(entries, Options{1}, nullptr, n);
  asm volatile("" ::: "memory");  // no tail call: caller_a stays on the stack
  return p;
}

__attribute__((noinline)) void* caller_b(StringIndex& index, int n) {
  Entries entries;
  void* p = index.insert_entries(entries, Options{2}, nullptr, n);
  asm volatile("" ::: "memory");
  return p;
}

__attribute__((noinline)) void* middle(int which, int n) {
  StringIndex index;
  void* p = which ? caller_a(index, n) : caller_b(index, n);
  asm volatile("" ::: "memory");
  return p;
}

int main() {
  std::vector<void*> kept;
  for (int i = 0; i < 2000; i++) kept.push_back(middle(i & 1, 100000));
  return 0;
}
