// The C++ functions of the test library: members, operators, templates, and
// functions with internal linkage.
#include <cstring>

#include "testlib.h"

namespace geometry {

struct Vec2 {
  double x, y;
  double length() const;
};

double Vec2::length() const { return x * x + y * y; }

Vec2 operator+(const Vec2& a, const Vec2& b) { return {a.x + b.x, a.y + b.y}; }

template <typename T>
T twice(T value) {
  return value + value;
}
template int twice<int>(int);

template <typename T>
struct Box {
  static T unwrap(const Box<T>& box, T fallback);
};
template <typename T>
T Box<T>::unwrap(const Box<T>&, T fallback) {
  return fallback;
}
template struct Box<long>;

}  // namespace geometry

static int file_local(int x) { return x * 3; }

namespace {
int anonymous_helper(int x) { return x * 5; }
}  // namespace

extern "C" const void* testlib_function(int which) {
  switch (which) {
    case kCxxMember: {
      // A pointer to a non-virtual member function holds its address first (Itanium ABI).
      auto member = &geometry::Vec2::length;
      const void* address;
      std::memcpy(&address, &member, sizeof address);
      return address;
    }
    case kCxxOperator: return reinterpret_cast<const void*>(
        static_cast<geometry::Vec2 (*)(const geometry::Vec2&, const geometry::Vec2&)>(&geometry::operator+));
    case kCxxFunctionTemplate: return reinterpret_cast<const void*>(&geometry::twice<int>);
    case kCxxClassTemplate: return reinterpret_cast<const void*>(&geometry::Box<long>::unwrap);
    case kCxxStatic: return reinterpret_cast<const void*>(&file_local);
    case kCxxAnonymous: return reinterpret_cast<const void*>(&anonymous_helper);
    default: return testlib_c_function(which);
  }
}
