// Files in directories other users can write: whatever is planted there is refused.
// The other-user cases need root (a file of another owner) and skip otherwise.
#include "common/safe_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>

namespace nmprof::safe_file {
namespace {

class SafeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/nmprof-safe-file-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    path_ = pattern;
    chmod(path_.c_str(), 01777);  // like /tmp
    dir_ = open(path_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_, 0);
  }
  void TearDown() override {
    close(dir_);
    std::string command = "rm -rf " + path_;
    ASSERT_EQ(system(command.c_str()), 0);
  }
  std::string at(const char* name) const { return path_ + "/" + name; }
  void write_file(const char* name, const char* text, mode_t mode = 0600) const {
    int fd = open(at(name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, text, strlen(text)), static_cast<ssize_t>(strlen(text)));
    close(fd);
  }
  std::string read_file(const char* name) const {
    char buffer[256] = {};
    int fd = open(at(name).c_str(), O_RDONLY);
    if (fd < 0) return "<missing>";
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    return std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  }

  std::string path_;
  int dir_ = -1;
};

TEST_F(SafeFile, CreateNewRefusesAnythingAlreadyThere) {
  write_file("victim", "precious");
  ASSERT_EQ(symlink(at("victim").c_str(), at("link").c_str()), 0);
  ASSERT_EQ(mkfifo(at("fifo").c_str(), 0666), 0);
  EXPECT_EQ(create_new(dir_, "victim", O_WRONLY, 0600), -EEXIST);
  EXPECT_EQ(create_new(dir_, "link", O_WRONLY, 0600), -EEXIST);
  EXPECT_EQ(create_new(dir_, "fifo", O_WRONLY, 0600), -EEXIST);
  EXPECT_EQ(read_file("victim"), "precious");

  int fd = create_new(dir_, "new", O_WRONLY, 0666);
  ASSERT_GE(fd, 0);
  close(fd);
  struct stat st {};
  ASSERT_EQ(stat(at("new").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, geteuid());
}

TEST_F(SafeFile, UniqueNamesAreNewEachTimeAndHardToGuess) {
  char first[64], second[64];
  int a = create_unique(dir_, "p-", ".s", O_WRONLY, 0600, first, sizeof first);
  int b = create_unique(dir_, "p-", ".s", O_WRONLY, 0600, second, sizeof second);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  close(a);
  close(b);
  EXPECT_NE(std::string(first), std::string(second));
  EXPECT_EQ(strlen(first), 2 + 26 + 2u);
  EXPECT_EQ(std::string(first).substr(0, 2), "p-");
  EXPECT_EQ(std::string(first).substr(28), ".s");
  char tiny[8];
  EXPECT_EQ(create_unique(dir_, "p-", ".s", O_WRONLY, 0600, tiny, sizeof tiny), kNameTooLong);
}

TEST_F(SafeFile, OpenOwnedRefusesLinksFifosDevicesAndHardLinks) {
  write_file("mine", "ok");
  ASSERT_EQ(symlink(at("mine").c_str(), at("link").c_str()), 0);
  ASSERT_EQ(link(at("mine").c_str(), at("second-name").c_str()), 0);
  ASSERT_EQ(mkfifo(at("fifo").c_str(), 0666), 0);
  EXPECT_EQ(open_owned(dir_, "link", O_RDONLY, geteuid()), -ELOOP);
  EXPECT_EQ(open_owned(dir_, "second-name", O_RDONLY, geteuid()), kHardLinked);
  // A FIFO without a writer would block a plain open forever.
  EXPECT_EQ(open_owned(dir_, "fifo", O_RDONLY, geteuid()), kNotRegular);
  EXPECT_EQ(open_owned(dir_, "missing", O_RDONLY, geteuid()), -ENOENT);
  int devices = open("/dev", O_PATH | O_DIRECTORY);
  EXPECT_EQ(open_owned(devices, "null", O_WRONLY, 0), kNotRegular);
  EXPECT_EQ(open_owned(devices, "null", O_WRONLY, kAnyOwner), kNotRegular);
  close(devices);
}

TEST_F(SafeFile, OpenOwnedOpensAndTruncatesOurOwnFile) {
  write_file("mine", "old contents");
  int fd = open_owned(dir_, "mine", O_WRONLY | O_TRUNC, geteuid());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "new", 3), 3);
  close(fd);
  EXPECT_EQ(read_file("mine"), "new");
  int self_fds = open("/proc/self/fd", O_PATH | O_DIRECTORY);
  fd = open_owned(dir_, "mine", O_RDONLY, geteuid(), self_fds);
  EXPECT_GE(fd, 0);
  close(fd);
  close(self_fds);
}

TEST_F(SafeFile, FilesOfOtherUsersAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to make a file of another user";
  write_file("planted", "forged", 0666);
  ASSERT_EQ(chown(at("planted").c_str(), 12345, 12345), 0);
  EXPECT_EQ(open_owned(dir_, "planted", O_WRONLY, geteuid()), kNotOwned);
  EXPECT_EQ(create_or_open_owned(dir_, "planted", O_WRONLY, 0600), kNotOwned);
  EXPECT_EQ(read_file("planted"), "forged");
  int fd = open_owned(dir_, "planted", O_RDONLY, kAnyOwner);
  EXPECT_GE(fd, 0);
  close(fd);
}

TEST_F(SafeFile, CreateOrOpenOwnedMakesA0600FileOrReusesOurs) {
  umask(0);
  int fd = create_or_open_owned(dir_, "rec", O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  struct stat st {};
  ASSERT_EQ(stat(at("rec").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  fd = create_or_open_owned(dir_, "rec", O_WRONLY, 0600);
  EXPECT_GE(fd, 0);
  close(fd);
  umask(022);
}

TEST_F(SafeFile, ParentDirectoriesEveryoneMayWriteMustBeSticky) {
  write_file("x", "");
  const char* name = nullptr;
  std::string x = at("x");  // name points into it
  int dir = open_parent(x.c_str(), &name);
  ASSERT_GE(dir, 0);
  EXPECT_STREQ(name, "x");
  close(dir);
  chmod(path_.c_str(), 0777);
  EXPECT_EQ(open_parent(x.c_str(), &name), kUnsafeDir);
  chmod(path_.c_str(), 0700);
  EXPECT_EQ(open_parent((path_ + "/").c_str(), &name), -EISDIR);
  dir = open_parent("relative-name", &name);
  EXPECT_GE(dir, 0);
  EXPECT_STREQ(name, "relative-name");
  close(dir);
}

// The inode of the directory open_parent opens for `path`, or its error.
struct OpenedParent {
  int error = 0;
  ino_t inode = 0;
};
OpenedParent parent_of(const std::string& path) {
  const char* name = nullptr;
  int dir = open_parent(path.c_str(), &name);
  if (dir < 0) return {dir, 0};
  struct stat st {};
  fstat(dir, &st);
  close(dir);
  return {0, st.st_ino};
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST_F(SafeFile, LinksOfOursOnTheWayAreFollowedAsTheKernelWould) {
  ASSERT_EQ(mkdir(at("target").c_str(), 0700), 0);
  ASSERT_EQ(mkdir(at("target/inner").c_str(), 0700), 0);
  ASSERT_EQ(symlink("target", at("relative").c_str()), 0);
  ASSERT_EQ(symlink(at("target").c_str(), at("absolute").c_str()), 0);
  ASSERT_EQ(symlink("relative/inner", at("chain").c_str()), 0);
  ASSERT_EQ(symlink("loop", at("loop").c_str()), 0);
  write_file("file", "");
  ino_t target = inode_of(at("target")), inner = inode_of(at("target/inner"));

  EXPECT_EQ(parent_of(at("relative/x")).inode, target);
  EXPECT_EQ(parent_of(at("absolute/x")).inode, target);
  EXPECT_EQ(parent_of(at("chain/x")).inode, inner);
  // ".." after a link is the parent of where the link led, as for the kernel.
  EXPECT_EQ(parent_of(at("chain/../x")).inode, target);
  EXPECT_EQ(parent_of(at("./relative//inner/./x")).inode, inner);
  EXPECT_EQ(parent_of(at("loop/x")).error, -ELOOP);
  EXPECT_EQ(parent_of(at("file/x")).error, -ENOTDIR);
  EXPECT_EQ(parent_of(at("missing/x")).error, -ENOENT);
  EXPECT_EQ(parent_of("/x").inode, inode_of("/"));

  // Relative to the working directory, through a link and up again.
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(path_.c_str()), 0);
  OpenedParent relative = parent_of("chain/../../relative/x");
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_EQ(relative.inode, target);
}

// A link another user put in a directory every user may write (/tmp/report -> a
// directory of root's), or a group, is not followed, whatever fs.protected_symlinks
// says; one of the directory's owner, or in a directory only its owner writes, is.
TEST_F(SafeFile, LinksOthersMayHavePlantedOnTheWayAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to make a link of another user";
  ASSERT_EQ(mkdir(at("target").c_str(), 0700), 0);
  ASSERT_EQ(symlink(at("target").c_str(), at("planted").c_str()), 0);
  ASSERT_EQ(lchown(at("planted").c_str(), 12345, 12345), 0);
  ino_t target = inode_of(at("target"));

  EXPECT_EQ(parent_of(at("planted/x")).error, kUntrustedLink);
  EXPECT_EQ(parent_of(at("planted/../x")).error, kUntrustedLink);
  chmod(path_.c_str(), 0777);  // not sticky: only more open
  EXPECT_EQ(parent_of(at("planted/x")).error, kUntrustedLink);
  chmod(path_.c_str(), 02775);  // a group's shared directory: its members may plant links
  EXPECT_EQ(parent_of(at("planted/x")).error, kUntrustedLink);
  chmod(path_.c_str(), 01777);
  ASSERT_EQ(chown(path_.c_str(), 12345, 12345), 0);  // the directory's owner's link
  EXPECT_EQ(parent_of(at("planted/x")).inode, target);
  ASSERT_EQ(chown(path_.c_str(), 0, 0), 0);
  chmod(path_.c_str(), 0755);  // only its owner writes it
  EXPECT_EQ(parent_of(at("planted/x")).inode, target);
}

TEST(RandomName, UsesOnlyLowercaseLettersAndDigits) {
  char name[27];
  ASSERT_TRUE(random_name(name, 26));
  EXPECT_EQ(strlen(name), 26u);
  EXPECT_EQ(std::string(name).find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789"), std::string::npos);
}

TEST(ErrorText, NamesEveryRefusal) {
  EXPECT_STREQ(error_text(kNotRegular), "not a regular file");
  EXPECT_STREQ(error_text(kNotOwned), "owned by another user");
  EXPECT_NE(std::string(error_text(kUntrustedLink)).find("symbolic link"), std::string::npos);
  EXPECT_STREQ(error_text(-ENOENT), strerror(ENOENT));
  EXPECT_EQ(to_errno(kNotOwned), EPERM);
  EXPECT_EQ(to_errno(-ENOENT), ENOENT);
}

}  // namespace
}  // namespace nmprof::safe_file
