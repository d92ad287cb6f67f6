#include "formats/jfr/reading/event.h"

#include <algorithm>
#include <stdexcept>

#include "formats/jfr/reading/byte_reader.h"

namespace nmprof::jfr {

FieldBinding::FieldBinding(const Type& type, std::span<const std::string_view> names)
    : type_(&type), slot_of_field_(type.fields.size(), -1), present_(names.size(), false) {
  int slot = 0;
  for (std::string_view name : names) {
    int i = type.field_index(name);
    if (i >= 0) {
      slot_of_field_[i] = slot;
      present_[slot] = true;
      fields_to_read_ = std::max(fields_to_read_, static_cast<size_t>(i) + 1);
    }
    slot++;
  }
}

void Event::read(const FieldBinding& binding, std::span<Value> slots) const {
  if (binding.type_ != &type_ || slots.size() < binding.slot_count())
    throw std::logic_error("field binding used with another event type");
  for (auto& s : slots) s.set_null();
  ByteReader in(record_, payload_start_);
  for (size_t i = 0; i < binding.fields_to_read_; i++) {
    int slot = binding.slot_of_field_[i];
    if (slot >= 0)
      decoder_.read(type_.fields[i], in, slots[slot]);
    else
      decoder_.skip(type_.fields[i], in);
  }
}

Value Event::value() const {
  Value v;
  ByteReader in(record_, payload_start_);
  decoder_.read_value(type_, in, v);
  return v;
}

}  // namespace nmprof::jfr
