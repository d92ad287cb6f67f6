// The source of seeds/elf_symbols/tinylib.so and seeds/eh_frame/tinylib (its .eh_frame_hdr and
// .eh_frame): a C++ and a C function, a template instance, a build-id; made by
//   g++ -shared -fPIC -O1 -nostdlib -fno-exceptions -Wl,-z,noseparate-code -Wl,--build-id -o tinylib.so tinylib.cpp
// and cut by make_seeds.py's eh_frame_memory().
namespace shapes { struct Circle { double r; double area() const; }; double Circle::area() const { return 3.14 * r * r; } }
extern "C" int plain_c_function(int x) { return x * 3 + 1; }
template <typename T> T twice(T x) { return x + x; }
template int twice<int>(int);
