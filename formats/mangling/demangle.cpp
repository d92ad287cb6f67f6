#include "formats/mangling/demangle.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "formats/mangling/rust_demangle.h"

namespace nmprof::symbols {

namespace {

bool is_ascii_alnum_or_punct(char c) { return c > ' ' && c < 0x7F; }

// LLVM's ThinLTO appends ".llvm.<hex>" to names it makes unique; rustc-demangle drops it.
std::string_view without_llvm_suffix(std::string_view name) {
  size_t at = name.find(".llvm.");
  if (at == std::string_view::npos) return name;
  std::string_view tail = name.substr(at + 6);
  bool is_hash = std::ranges::all_of(tail, [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || c == '@'; });
  return is_hash ? name.substr(0, at) : name;
}

std::optional<std::string> demangle_rust(std::string_view name) {
  name = without_llvm_suffix(name);
  std::optional<RustName> rust = demangle_rust_legacy(name);
  if (!rust) rust = demangle_rust_v0(name);
  if (!rust) return std::nullopt;
  // A compiler-added suffix such as ".cold" stays behind the name; anything else means it was not a Rust name.
  std::string_view suffix = name.substr(rust->mangled_length);
  if (!suffix.empty() && (suffix[0] != '.' || !std::ranges::all_of(suffix, is_ascii_alnum_or_punct))) {
    return std::nullopt;
  }
  rust->readable += suffix;
  return std::move(rust->readable);
}

std::optional<std::string> demangle_cxx(std::string_view name) {
  std::string terminated(name);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(terminated.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || readable == nullptr) return std::nullopt;
  return std::string(readable.get());
}

}  // namespace

std::string demangle(std::string_view name) {
  if (auto rust = demangle_rust(name)) return std::move(*rust);
  if (name.starts_with("_Z")) {
    if (auto cxx = demangle_cxx(name)) return std::move(*cxx);
  }
  return std::string(name);
}

}  // namespace nmprof::symbols
