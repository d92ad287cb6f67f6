// With rustc on PATH: builds a Rust cdylib with v0 and with legacy mangling,
// loads it, and resolves its functions' addresses to demangled Rust paths.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "agent/symbols/symbol_table.h"
#include "tests/symbols/test_support.h"

namespace nmprof::symbols {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCrateSource = R"(
pub struct Point { pub x: f64, pub y: f64 }
impl Point {
    #[inline(never)]
    pub fn norm(&self) -> f64 { (self.x * self.x + self.y * self.y).sqrt() }
}
pub trait Shape { fn area(&self) -> f64; }
impl Shape for Point {
    #[inline(never)]
    fn area(&self) -> f64 { self.x * self.y }
}
#[inline(never)]
pub fn largest<T: PartialOrd + Copy>(items: &[T]) -> T {
    let mut max = items[0];
    for &item in items { if item > max { max = item; } }
    max
}
pub fn doubler() -> fn(u32) -> u32 { |x| x * 2 }
#[no_mangle]
pub extern "C" fn nmprof_rust_probe(which: usize) -> *const () {
    match which {
        0 => Point::norm as fn(&Point) -> f64 as *const (),
        1 => <Point as Shape>::area as fn(&Point) -> f64 as *const (),
        2 => largest::<u32> as fn(&[u32]) -> u32 as *const (),
        3 => doubler() as *const (),
        _ => std::ptr::null(),
    }
}
)";

constexpr int kProbeCount = 4;

bool have_rustc() { return std::system("command -v rustc >/dev/null 2>&1") == 0; }

// Builds the crate with `mangling` ("v0" or "legacy") and returns the names of its probes.
std::vector<std::string> probe_names(const std::string& mangling) {
  testing::TempDir temp;
  fs::path source = temp.path() / "lib.rs";
  fs::path library = temp.path() / ("lib" + mangling + ".so");
  testing::write_file(source, kCrateSource);
  // Legacy mangling is unstable in current rustc; RUSTC_BOOTSTRAP lets a stable compiler take -Z.
  std::string command = "RUSTC_BOOTSTRAP=1 rustc --crate-type cdylib --crate-name nmprof_rust_e2e -C opt-level=0 " +
                        std::string(mangling == "legacy" ? "-Z unstable-options " : "") +
                        "-C symbol-mangling-version=" + mangling + " -o " + library.string() + " " + source.string() +
                        " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;

  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return {};
  auto probe = reinterpret_cast<const void* (*)(size_t)>(dlsym(handle, "nmprof_rust_probe"));
  auto module = testing::module_containing(reinterpret_cast<const void*>(probe));
  std::string error;
  auto table = SymbolTable::from_file(library, &error);
  EXPECT_TRUE(table) << error;
  std::vector<std::string> names;
  for (int which = 0; table && which < kProbeCount; ++which) {
    auto symbol = table->find(reinterpret_cast<uintptr_t>(probe(which)) - module->load_bias);
    names.push_back(symbol ? std::string(symbol->name) : "(none)");
  }
  dlclose(handle);
  return names;
}

TEST(RustEndToEnd, V0Mangling) {
  if (!have_rustc()) GTEST_SKIP() << "rustc is not on PATH";
  EXPECT_EQ(probe_names("v0"), (std::vector<std::string>{
                                   "<nmprof_rust_e2e::Point>::norm",
                                   "<nmprof_rust_e2e::Point as nmprof_rust_e2e::Shape>::area",
                                   "nmprof_rust_e2e::largest::<u32>",
                                   // A closure as a fn pointer is its FnOnce shim.
                                   "<nmprof_rust_e2e::doubler::{closure#0} as core::ops::function::FnOnce<(u32,)>>::call_once",
                               }));
}

TEST(RustEndToEnd, LegacyMangling) {
  if (!have_rustc()) GTEST_SKIP() << "rustc is not on PATH";
  EXPECT_EQ(probe_names("legacy"), (std::vector<std::string>{
                                       "nmprof_rust_e2e::Point::norm",
                                       "<nmprof_rust_e2e::Point as nmprof_rust_e2e::Shape>::area",
                                       "nmprof_rust_e2e::largest",
                                       "core::ops::function::FnOnce::call_once",
                                   }));
}

}  // namespace
}  // namespace nmprof::symbols
