// The check of an option that counts something (--top, --depth): a wrong value is
// refused naming what it counts and the range, "'-1' is not a number of frames from
// 0 to 1000000 (0: all)", rather than CLI11's "Value -1 not in range".
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace nmprof::cli {

inline constexpr uint64_t kMaxTop = 1000000;  // stacks a report or summary shows (--top)

// `things`: what is counted ("frames"); `note`: what a special value means ("0: all"), or "".
CLI::Validator count_check(uint64_t min, uint64_t max, const std::string& things, const std::string& note = "");

}  // namespace nmprof::cli
