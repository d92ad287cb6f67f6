#include "agent/writing/default_metadata.h"

#include <gtest/gtest.h>

#include <vector>

#include "formats/jfr/nmprof_schema.h"

namespace nmprof {
namespace {

// The metadata encoded at build time is what the schema encodes now, and what a
// recording with context attributes declares differs from it.
TEST(DefaultMetadata, IsTheSchemaWithoutContextAttributes) {
  jfr::Metadata schema = jfr::schema::nmprof_metadata({});
  jfr::ByteBuffer body = schema.encode_body();
  std::span<const uint8_t> embedded = default_metadata_body();
  EXPECT_EQ(std::vector<uint8_t>(embedded.begin(), embedded.end()),
            std::vector<uint8_t>(body.data(), body.data() + body.size()));
  EXPECT_EQ(default_metadata_id(), schema.fingerprint());
  std::vector<std::string> attributes{"route"};
  EXPECT_NE(default_metadata_id(), jfr::schema::nmprof_metadata(attributes).fingerprint());
}

}  // namespace
}  // namespace nmprof
