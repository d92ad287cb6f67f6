// C++ allocations through operator new, std::vector and std::string, in namespaced
// and templated functions, to check demangled names.
#include <memory>
#include <string>
#include <vector>

namespace app {

template <typename T>
struct Cache {
  std::vector<T> items;
  __attribute__((noinline)) void grow(size_t n) {
    items.resize(items.size() + n);
    items.back() = static_cast<T>(n);  // work after the call: no tail call hides this frame
  }
};

__attribute__((noinline)) std::unique_ptr<char[]> make_buffer(size_t n) { return std::unique_ptr<char[]>(new char[n]); }

}  // namespace app

int main() {
  app::Cache<long> cache;
  for (int i = 0; i < 100; i++) cache.grow(10000);
  std::vector<std::unique_ptr<char[]>> buffers;
  for (int i = 0; i < 100; i++) buffers.push_back(app::make_buffer(100000));
  return cache.items.size() == 1000000 ? 0 : 1;
}
