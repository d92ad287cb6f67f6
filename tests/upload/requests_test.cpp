// What the user gives (URLs, headers) and what nmprof makes of it for Pyroscope's
// ingest API: the query, the labels its parser takes, the multipart form of a JFR.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "cli/upload/headers.h"
#include "cli/upload/http_client.h"
#include "cli/upload/pyroscope_request.h"
#include "cli/upload/upload_settings.h"
#include "cli/upload/url.h"
#include "formats/pprof/gzip.h"

namespace nmprof::upload {
namespace {

std::optional<Url> url(const std::string& text, std::string* error = nullptr) {
  std::string ignored;
  return parse_url(text, "--upload", error ? error : &ignored);
}

TEST(Url, TakesHttpAndHttpsBaseUrls) {
  auto u = url("http://localhost:4040");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->with_path("/ingest"), "http://localhost:4040/ingest");
  u = url("HTTPS://profiles.example.com/prefix/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->with_path("/ingest"), "https://profiles.example.com/prefix/ingest");
  u = url("http://[::1]:4040");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->text(), "http://[::1]:4040");
}

TEST(Url, RefusesWhatIsNoBaseUrlInOneLine) {
  std::string error;
  EXPECT_FALSE(url("localhost:4040", &error));
  EXPECT_EQ(error, "--upload: 'localhost:4040' is not a URL (e.g. http://localhost:4040)");
  EXPECT_FALSE(url("ftp://host", &error));
  EXPECT_NE(error.find("not an http:// or https:// URL"), std::string::npos);
  EXPECT_FALSE(url("https://user:secret@host", &error));
  EXPECT_NE(error.find("credentials, which would show in ps"), std::string::npos);
  EXPECT_FALSE(url("http://host/ingest?name=x", &error));
  EXPECT_NE(error.find("query"), std::string::npos);
  for (const char* bad : {"http://", "http://host:", "http://host:99999", "http://ho st", "http://:80", "http://[::1"})
    EXPECT_FALSE(url(bad, &error)) << bad;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(Url, PercentEncodesAllButTheUnreserved) {
  EXPECT_EQ(percent_encoded("app{env=prod,region=eu-1}"), "app%7Benv%3Dprod%2Cregion%3Deu-1%7D");
  EXPECT_EQ(percent_encoded("a b/c~_."), "a%20b%2Fc~_.");
}

TEST(Headers, TakesNameValueLinesAndSkipsCommentsAndBlanks) {
  std::vector<Header> headers;
  std::string error;
  ASSERT_TRUE(parse_headers("# tenant\nX-Scope-OrgID: team-a\n\nAuthorization:  Bearer abc.def \r\nX-Empty:\n", "file",
                            &headers, &error))
      << error;
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[0].name, "X-Scope-OrgID");
  EXPECT_EQ(headers[0].value, "team-a");
  EXPECT_EQ(headers[1].value, "Bearer abc.def");
  EXPECT_EQ(headers[2].value, "");
}

TEST(Headers, RefusesALineThatIsNoHeaderWithoutShowingItsValue) {
  std::vector<Header> headers;
  std::string error;
  EXPECT_FALSE(parse_headers("Authorization Bearer s3cret", "f", &headers, &error));
  EXPECT_EQ(error, "f, line 1: not a header ('Name: value')");
  EXPECT_FALSE(parse_headers("\nBad Name: s3cret", "f", &headers, &error));
  EXPECT_EQ(error.find("s3cret"), std::string::npos);
  EXPECT_NE(error.find("line 2"), std::string::npos);
  // The ':' after the name forgotten, a token that holds one.
  EXPECT_FALSE(parse_headers("Authorization Basic s3cret:more", "f", &headers, &error));
  EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
  EXPECT_FALSE(parse_headers("Content-Type: text/plain", "f", &headers, &error));
  EXPECT_EQ(error, "f, line 1: Content-Type is set by nmprof");
  EXPECT_FALSE(parse_headers(std::string("X: a\x01s3cret"), "f", &headers, &error));
  EXPECT_EQ(error.find("s3cret"), std::string::npos);
}

class HeaderFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/nmprof-headers-XXXXXX";
    int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << "Authorization: Bearer s3cret\n";
    unsetenv(kHeadersVariable);
  }
  void TearDown() override {
    unlink(path_.c_str());
    unsetenv(kHeadersVariable);
  }
  std::string path_;
};

TEST_F(HeaderFile, IsReadWhenOnlyItsOwnerMayReadIt) {
  chmod(path_.c_str(), 0600);
  setenv(kHeadersVariable, "X-Scope-OrgID: 7", 1);
  std::vector<Header> headers;
  std::string error;
  ASSERT_TRUE(load_headers(path_, &headers, &error)) << error;
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0].name, "X-Scope-OrgID");  // the environment's first
  EXPECT_EQ(headers[1].value, "Bearer s3cret");
}

TEST_F(HeaderFile, IsRefusedWhenOthersMayReadIt) {
  for (mode_t mode : {0644, 0640, 0606, 0620}) {
    chmod(path_.c_str(), mode);
    std::vector<Header> headers;
    std::string error;
    EXPECT_FALSE(load_headers(path_, &headers, &error)) << mode;
    EXPECT_NE(error.find("chmod 600"), std::string::npos) << error;
    EXPECT_TRUE(headers.empty());
  }
  std::vector<Header> headers;
  std::string error;
  EXPECT_FALSE(load_headers("/nonexistent/headers", &headers, &error));
  EXPECT_NE(error.find("cannot read /nonexistent/headers"), std::string::npos);
  EXPECT_FALSE(load_headers("/tmp", &headers, &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos);
}

TEST_F(HeaderFile, AFifoIsRefusedWithoutWaitingForAWriterAndALinkIsFollowed) {
  std::string fifo = path_ + ".fifo", link = path_ + ".link";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::vector<Header> headers;
  std::string error;
  EXPECT_FALSE(load_headers(fifo, &headers, &error));  // returns: no writer is waited for
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  unlink(fifo.c_str());
  // A link (as Kubernetes mounts secrets) is read when the file it names is the owner's alone.
  chmod(path_.c_str(), 0600);
  ASSERT_EQ(symlink(path_.c_str(), link.c_str()), 0);
  EXPECT_TRUE(load_headers(link, &headers, &error)) << error;
  EXPECT_EQ(headers.size(), 1u);
  chmod(path_.c_str(), 0644);
  EXPECT_FALSE(load_headers(link, &headers, &error));
  EXPECT_NE(error.find("mode 0644"), std::string::npos) << error;
  unlink(link.c_str());
}

TEST(PyroscopeLabels, AreCheckedAsPyroscopesParserTakesThem) {
  EXPECT_FALSE(check_app_name("checkout-service/eu.1_a"));
  EXPECT_TRUE(check_app_name("my app"));
  EXPECT_TRUE(check_app_name(""));
  EXPECT_FALSE(check_label("env", "prod east"));
  EXPECT_FALSE(check_label("k8s.pod_name", "a=b{c"));
  EXPECT_TRUE(check_label("env-name", "x"));
  EXPECT_TRUE(check_label("__name__", "x"));
  EXPECT_TRUE(check_label("env", "a,b"));
  EXPECT_TRUE(check_label("env", "a}"));
  EXPECT_TRUE(check_label("env", " a"));
  EXPECT_EQ(app_name_from("php-fpm: pool www"), "php-fpm__pool_www");
  EXPECT_EQ(app_name_from(""), "nmprof");
}

PyroscopeTarget target(PyroscopeFormat format) {
  return {*url("http://pyro:4040/base"), "shop", {{"env", "prod"}, {"region", "eu"}}, format};
}

TEST(PyroscopeRequest, PprofIsTheBodyWithTheIngestQuery) {
  HttpRequest r =
      pyroscope_request(target(PyroscopeFormat::Pprof), "PPROF", 1700000000'500000000, 1700000060'100000000);
  EXPECT_EQ(r.url,
            "http://pyro:4040/base/ingest?name=shop%7Benv%3Dprod%2Cregion%3Deu%7D&from=1700000000&until=1700000061"
            "&format=pprof&units=bytes&aggregationType=sum&spyName=nmprof");
  EXPECT_EQ(r.body, "PPROF");
  EXPECT_EQ(r.content_type, "application/octet-stream");
  EXPECT_EQ(r.content_encoding, "");
}

TEST(PyroscopeRequest, AnAppWithoutLabelsIsItsNameAlone) {
  PyroscopeTarget t = target(PyroscopeFormat::Pprof);
  t.labels.clear();
  EXPECT_NE(pyroscope_request(t, "P", 0, 0).url.find("?name=shop&from=0&until=0&"), std::string::npos);
}

TEST(PyroscopeRequest, JfrIsAMultipartFormWithAGzippedJfrField) {
  std::string jfr("FLR\0jfr-bytes", 13);
  HttpRequest r = pyroscope_request(target(PyroscopeFormat::Jfr), jfr, 0, 1);
  EXPECT_NE(r.url.find("&format=jfr&"), std::string::npos);
  const std::string prefix = "multipart/form-data; boundary=";
  ASSERT_TRUE(r.content_type.starts_with(prefix));
  std::string boundary = r.content_type.substr(prefix.size());
  EXPECT_EQ(r.body, jfr_form(pprof::gzip(jfr), boundary));
  EXPECT_TRUE(
      r.body.starts_with("--" + boundary + "\r\nContent-Disposition: form-data; name=\"jfr\"; filename=\"jfr\"\r\n"));
  EXPECT_TRUE(r.body.ends_with("\r\n--" + boundary + "--\r\n"));
}

TEST(ServerMessage, IsTheJsonMessageOrTheFirstLine) {
  EXPECT_EQ(server_message("{\"code\":\"invalid_argument\",\"message\":\"name: invalid label\"}\n"),
            "name: invalid label");
  EXPECT_EQ(server_message("\nbad request\nmore"), "bad request");
  EXPECT_EQ(server_message(std::string(300, 'x')), std::string(200, 'x') + "...");
  EXPECT_EQ(server_message("a\x1b[31mred"), "a\\x1b[31mred");
  // Not cut inside a character: 199 x and a 2-byte é.
  EXPECT_EQ(server_message(std::string(199, 'x') + "\xc3\xa9" + "tail"), std::string(199, 'x') + "...");
  EXPECT_EQ(server_message(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)), "a body that is not text");
  EXPECT_EQ(server_message("ok\xff\xfe garbage"), "a body that is not text");
}

TEST(UploadSettings, OtlpGetsTheProfilesPathWhenGivenABaseUrl) {
  cli::UploadOptions options;
  options.otlp = "http://collector:4318";
  std::string error;
  auto settings = upload_settings(options, {}, &error);
  ASSERT_TRUE(settings) << error;
  EXPECT_EQ(settings->otlp->text(), "http://collector:4318/v1development/profiles");
  options.otlp = "http://collector:4318/custom/profiles";
  settings = upload_settings(options, {}, &error);
  EXPECT_EQ(settings->otlp->text(), "http://collector:4318/custom/profiles");
}

TEST(UploadSettings, RefuseOptionsWithoutADestinationAndTagsPyroscopeCannotTake) {
  cli::UploadOptions options;
  options.app = "shop";
  std::string error;
  EXPECT_FALSE(upload_settings(options, {}, &error));
  EXPECT_EQ(error, "--app goes with --upload URL or --otlp URL");
  options.pyroscope = "http://pyro:4040";
  EXPECT_TRUE(upload_settings(options, {"env=prod"}, &error)) << error;
  EXPECT_FALSE(upload_settings(options, {"env=a,b"}, &error));
  EXPECT_NE(error.find("cannot hold ','"), std::string::npos);
  options.pyroscope.clear();
  options.otlp = "http://collector:4318";
  EXPECT_TRUE(upload_settings(options, {"env=a,b"}, &error)) << error;  // OTLP attributes take any value
  options.format = "jfr";
  EXPECT_FALSE(upload_settings(options, {}, &error));
  EXPECT_NE(error.find("--upload-format"), std::string::npos);
}

}  // namespace
}  // namespace nmprof::upload
