// One event record of a chunk, decoded on request. A FieldBinding names the fields a
// consumer wants; reading an event fills just those into reused slots, so millions
// of events decode without building a value tree for each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "formats/jfr/reading/type_system.h"
#include "formats/jfr/reading/value.h"
#include "formats/jfr/reading/value_decoder.h"

namespace nmprof::jfr {

class FieldBinding {
 public:
  FieldBinding() = default;
  // Slot i receives the field named names[i]; a name the type lacks leaves its slot null.
  FieldBinding(const Type& type, std::initializer_list<std::string_view> names)
      : FieldBinding(type, std::span<const std::string_view>(names.begin(), names.size())) {}
  FieldBinding(const Type& type, std::span<const std::string_view> names);

  size_t slot_count() const { return present_.size(); }
  // Whether the type has the field of that slot.
  bool has(size_t slot) const { return present_[slot]; }

 private:
  friend class Event;
  const Type* type_ = nullptr;
  std::vector<int> slot_of_field_;  // per field of the type, -1 when not wanted
  size_t fields_to_read_ = 0;       // the fields after the last wanted one are never touched
  std::vector<bool> present_;
};

class Event {
 public:
  Event(const ValueDecoder& decoder, const Type& type, std::span<const uint8_t> record, size_t payload_start,
        size_t offset)
      : decoder_(decoder), type_(type), record_(record), payload_start_(payload_start), offset_(offset) {}

  const Type& type() const { return type_; }
  // Position of the record in the file, for messages.
  size_t offset() const { return offset_; }
  // Fills slots (binding.slot_count() of them) from the fields the binding names.
  // Throws FormatError if the record is damaged.
  void read(const FieldBinding& binding, std::span<Value> slots) const;
  // Every field, as a struct value of the event's type.
  Value value() const;

 private:
  const ValueDecoder& decoder_;
  const Type& type_;
  std::span<const uint8_t> record_;
  size_t payload_start_;
  size_t offset_;
};

}  // namespace nmprof::jfr
