#include "agent/writing/jfr_pools.h"

#include "formats/jfr/nmprof_schema.h"

namespace nmprof {

using jfr::ConstantPools;
namespace schema = jfr::schema;

uint32_t JfrPools::Texts::intern(std::string_view text) {
  if (auto found = ids_.find(text); found != ids_.end()) return found->second;
  auto [it, added] = ids_.try_emplace(std::string(text), 0);
  if (added) {
    entries_.push_back({&it->first, 0});
    it->second = static_cast<uint32_t>(entries_.size());
  }
  return it->second;
}

bool JfrPools::Texts::first_in(uint32_t id, uint32_t generation) {
  Entry& e = entries_[id - 1];
  if (e.written_in == generation) return false;
  e.written_in = generation;
  return true;
}

size_t JfrPools::Texts::memory_bytes() const {
  size_t bytes = entries_.capacity() * sizeof(Entry);
  for (const auto& e : entries_) bytes += e.text->capacity() + 64;  // text and its hash node
  return bytes;
}

uint32_t JfrPools::symbol(std::string_view text) { return symbols_.intern(text); }

uint32_t JfrPools::package(std::string_view name) {
  uint32_t name_id = symbol(name);
  auto [it, added] = package_ids_.try_emplace(name_id, 0);
  if (added) {
    packages_.push_back({name_id, 0});
    it->second = static_cast<uint32_t>(packages_.size());
  }
  return it->second;
}

uint32_t JfrPools::klass(std::string_view name, uint32_t package, int modifiers) {
  uint32_t name_id = symbol(name);
  auto [it, added] = class_ids_.try_emplace((static_cast<uint64_t>(package) << 32) | name_id, 0);
  if (added) {
    classes_.push_back({name_id, package, modifiers, 0});
    it->second = static_cast<uint32_t>(classes_.size());
  }
  return it->second;
}

uint32_t JfrPools::method(uint32_t klass, std::string_view name, std::string_view descriptor, int modifiers) {
  uint32_t name_id = symbol(name);
  uint32_t descriptor_id = symbol(descriptor);
  auto [it, added] = method_ids_.try_emplace(MethodKey{klass, name_id, descriptor_id}, 0);
  if (added) {
    methods_.push_back({klass, name_id, descriptor_id, modifiers, 0});
    it->second = static_cast<uint32_t>(methods_.size());
  }
  return it->second;
}

void JfrPools::write_symbol(uint32_t id, ConstantPools& out, uint32_t generation, uint64_t key_base) {
  if (!symbols_.first_in(id, generation)) return;
  auto& entry = out.add_entry(schema::kSymbol);
  entry.put_varint(key_base | id);
  entry.put_string(symbols_.text(id));
}

void JfrPools::write_class(uint32_t id, ConstantPools& out, uint32_t generation, uint64_t key_base) {
  Class& c = classes_[id - 1];
  if (c.written_in == generation) return;
  c.written_in = generation;
  write_symbol(c.name, out, generation, key_base);
  if (c.package) {
    Package& p = packages_[c.package - 1];
    if (p.written_in != generation) {
      p.written_in = generation;
      write_symbol(p.name, out, generation, key_base);
      auto& entry = out.add_entry(schema::kPackage);
      entry.put_varint(key_base | c.package);
      entry.put_varint(key_base | p.name);
    }
  }
  auto& entry = out.add_entry(schema::kClass);
  entry.put_varint(key_base | id);
  entry.put_varint(0);  // class loader: none
  entry.put_varint(key_base | c.name);
  entry.put_varint(c.package ? key_base | c.package : 0);
  entry.put_varint(static_cast<uint32_t>(c.modifiers));
  entry.put_bool(false);  // hidden
}

void JfrPools::write_method(uint32_t id, ConstantPools& out, uint32_t generation, uint64_t key_base) {
  Method& m = methods_[id - 1];
  if (m.written_in == generation) return;
  m.written_in = generation;
  write_class(m.klass, out, generation, key_base);
  write_symbol(m.name, out, generation, key_base);
  write_symbol(m.descriptor, out, generation, key_base);
  auto& entry = out.add_entry(schema::kMethod);
  entry.put_varint(key_base | id);
  entry.put_varint(key_base | m.klass);
  entry.put_varint(key_base | m.name);
  entry.put_varint(key_base | m.descriptor);
  entry.put_varint(static_cast<uint32_t>(m.modifiers));
  entry.put_bool(false);  // hidden: jfr print would omit the frame
}

size_t JfrPools::memory_bytes() const {
  size_t bytes = symbols_.memory_bytes() + packages_.capacity() * sizeof(Package) +
                 classes_.capacity() * sizeof(Class) + methods_.capacity() * sizeof(Method);
  return bytes + (class_ids_.size() + package_ids_.size() + method_ids_.size()) * 40;
}

}  // namespace nmprof
