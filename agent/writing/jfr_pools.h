// The recording's symbols, classes and methods: deduplicated, numbered, and written
// into the file's constant pools once per output file ("generation"). Native
// functions are methods of a class named after their library; Java methods (later)
// are methods of their Java class. Only the writer uses them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/jfr/writing/constant_pools.h"

namespace nmprof {

class JfrPools {
 public:
  uint32_t symbol(std::string_view text);
  uint32_t package(std::string_view name);
  // A class by name (libraries by basename, Java classes in internal form a/b/C);
  // package 0 = none.
  uint32_t klass(std::string_view name, uint32_t package = 0, int modifiers = 0);
  uint32_t method(uint32_t klass, std::string_view name, std::string_view descriptor, int modifiers);

  // Adds the pool entries of `method` and everything it refers to that the current
  // output file does not hold yet. Keys are `key_base | id`.
  void write_method(uint32_t method, jfr::ConstantPools& out, uint32_t generation, uint64_t key_base);

  size_t memory_bytes() const;

 private:
  // Deduplicated texts numbered from 1, each remembering the output file it is in.
  class Texts {
   public:
    uint32_t intern(std::string_view text);
    // False when `id` is in the file of `generation` already; otherwise marks it so.
    bool first_in(uint32_t id, uint32_t generation);
    const std::string& text(uint32_t id) const { return *entries_[id - 1].text; }
    size_t memory_bytes() const;

   private:
    struct Entry {
      const std::string* text;  // the key in ids_ (node keys never move)
      uint32_t written_in;
    };
    // Looked up by string_view: a text already interned costs no std::string.
    struct Hash {
      using is_transparent = void;
      size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
    };
    std::vector<Entry> entries_;
    std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  };
  struct Package {
    uint32_t name;
    uint32_t written_in;
  };
  struct Class {
    uint32_t name;
    uint32_t package;
    int modifiers;
    uint32_t written_in;
  };
  struct Method {
    uint32_t klass;
    uint32_t name;
    uint32_t descriptor;
    int modifiers;
    uint32_t written_in;
  };

  void write_symbol(uint32_t id, jfr::ConstantPools& out, uint32_t generation, uint64_t key_base);
  void write_class(uint32_t id, jfr::ConstantPools& out, uint32_t generation, uint64_t key_base);

  Texts symbols_;
  std::vector<Package> packages_;
  std::unordered_map<uint32_t, uint32_t> package_ids_;  // name symbol -> package id
  std::vector<Class> classes_;
  std::unordered_map<uint64_t, uint32_t> class_ids_;    // (name, package) -> class id
  std::vector<Method> methods_;
  struct MethodKey {
    uint32_t klass, name, descriptor;
    bool operator==(const MethodKey&) const = default;
  };
  struct MethodKeyHash {
    size_t operator()(const MethodKey& k) const {
      return ((static_cast<uint64_t>(k.klass) << 42) ^ (static_cast<uint64_t>(k.name) << 21) ^ k.descriptor) *
             0x9E3779B97F4A7C15ull;
    }
  };
  std::unordered_map<MethodKey, uint32_t, MethodKeyHash> method_ids_;
};

}  // namespace nmprof
