#include "formats/jfr/reading/value.h"

#include <utility>

namespace nmprof::jfr {

const std::string& Value::string() const& {
  static const std::string empty;
  return kind_ == Kind::String ? string_ : empty;
}

std::string Value::string() && { return kind_ == Kind::String ? std::move(string_) : std::string(); }

const std::vector<Value>& Value::elements() const& {
  static const std::vector<Value> none;
  return kind_ == Kind::Struct || kind_ == Kind::Array ? elements_ : none;
}

std::vector<Value> Value::elements() && {
  return kind_ == Kind::Struct || kind_ == Kind::Array ? std::move(elements_) : std::vector<Value>();
}

int Value::field_slot(std::string_view name) const {
  if (kind_ != Kind::Struct || !type_) return -1;
  int i = type_->field_index(name);
  return i >= 0 && static_cast<size_t>(i) < elements_.size() ? i : -1;
}

const Value& Value::field(std::string_view name) const& {
  static const Value null;
  int i = field_slot(name);
  return i >= 0 ? elements_[i] : null;
}

Value Value::field(std::string_view name) && {
  int i = field_slot(name);
  return i >= 0 ? std::move(elements_[i]) : Value();
}

}  // namespace nmprof::jfr
