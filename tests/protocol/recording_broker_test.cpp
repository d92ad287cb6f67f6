#include "protocol/recording_broker.h"

#include <fcntl.h>
#include <gtest/gtest.h>

namespace nmprof {
namespace {

TEST(RecordingBroker, OpensARecordingOrItsPidSuffixedTwin) {
  EXPECT_TRUE(broker_may_open("1234.jfr", O_WRONLY | O_CREAT));
  EXPECT_TRUE(broker_may_open("1234.jfr", O_WRONLY));
  EXPECT_TRUE(broker_may_open("1234.1234.jfr", O_RDONLY));
}

TEST(RecordingBroker, NothingElseOfTheStagingDirectory) {
  for (const char* name : {"", ".jfr", "x.jfr", "1234", "1234.jfr.jfr", "../1234.jfr", "/etc/1234.jfr", "1234.x.jfr",
                           "1.2.3.jfr", "12345678901.jfr", "probe.log", "1234.JFR"})
    EXPECT_FALSE(broker_may_open(name, O_WRONLY | O_CREAT)) << name;
}

TEST(RecordingBroker, NoMoreThanReadingOrWritingAndCreating) {
  EXPECT_FALSE(broker_may_open("1234.jfr", O_RDWR));
  EXPECT_FALSE(broker_may_open("1234.jfr", O_RDONLY | O_CREAT));
  EXPECT_FALSE(broker_may_open("1234.jfr", O_WRONLY | O_TRUNC));
  EXPECT_FALSE(broker_may_open("1234.jfr", O_WRONLY | O_APPEND));
  EXPECT_FALSE(broker_may_open("1234.jfr", O_WRONLY | O_NOFOLLOW));
}

}  // namespace
}  // namespace nmprof
