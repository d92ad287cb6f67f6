#include "cli/output/invoking_user.h"

#include <grp.h>
#include <pwd.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace nmprof::cli {
namespace {

std::optional<unsigned> environment_id(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  unsigned id = 0;
  auto [end, ec] = std::from_chars(text, text + std::strlen(text), id);
  if (ec != std::errc() || *end) return std::nullopt;
  return id;
}

// The user's supplementary groups, from the group database; just `gid` if unknown.
std::vector<gid_t> groups_of(uid_t uid, gid_t gid) {
  passwd entry{};
  passwd* found = nullptr;
  char buffer[16384];
  std::vector<gid_t> groups(64);
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) != 0 || !found) return {gid};
  int count = static_cast<int>(groups.size());
  if (getgrouplist(found->pw_name, gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<size_t>(count));
    if (getgrouplist(found->pw_name, gid, groups.data(), &count) < 0) return {gid};
  }
  groups.resize(static_cast<size_t>(count));
  return groups;
}

struct SudoUser {
  uid_t uid;
  gid_t gid;
};

std::optional<SudoUser> sudo_user() {
  auto uid = environment_id("SUDO_UID");
  auto gid = environment_id("SUDO_GID");
  if (geteuid() != 0 || !uid || !gid || *uid == 0) return std::nullopt;
  return SudoUser{*uid, *gid};
}

}  // namespace

bool invoked_through_sudo() { return sudo_user().has_value(); }

AsInvokingUser::AsInvokingUser() {
  auto user = sudo_user();
  if (!user) return;
  int count = getgroups(0, nullptr);
  saved_groups_.resize(count > 0 ? static_cast<size_t>(count) : 0);
  if (count > 0 && getgroups(count, saved_groups_.data()) < 0) saved_groups_.clear();
  std::vector<gid_t> groups = groups_of(user->uid, user->gid);
  if (setgroups(groups.size(), groups.data()) != 0) return;
  setfsgid(user->gid);
  setfsuid(user->uid);
  switched_ = true;
}

AsInvokingUser::~AsInvokingUser() {
  if (!switched_) return;
  setfsuid(geteuid());
  setfsgid(getegid());
  setgroups(saved_groups_.size(), saved_groups_.data());
}

}  // namespace nmprof::cli
