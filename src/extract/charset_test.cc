// Charset detection and conversion tests (HTML §13.2.3, WHATWG Encoding).
#include <iconv.h>

#include <gtest/gtest.h>

#include <string>

#include "extract/charset.h"
#include "extract/extract.h"

namespace harvest::extract {
namespace {

constexpr char kRussian[] =
    "Привет, мир! Это тестовая страница на русском языке, чтобы проверить определение "
    "кодировки. Съешь же ещё этих мягких французских булок, да выпей чаю.";

// Encodes UTF-8 text into `to` with glibc iconv (the reverse of what is under test).
std::string Encode(std::string_view utf8, const char* to) {
  iconv_t cd = iconv_open(to, "UTF-8");
  EXPECT_NE(cd, reinterpret_cast<iconv_t>(-1));
  std::string out(utf8.size() * 4 + 16, '\0');
  char* in = const_cast<char*>(utf8.data());
  size_t inleft = utf8.size();
  char* o = out.data();
  size_t oleft = out.size();
  EXPECT_NE(iconv(cd, &in, &inleft, &o, &oleft), static_cast<size_t>(-1));
  out.resize(out.size() - oleft);
  iconv_close(cd);
  return out;
}

TEST(Charset, WhatwgLabels) {
  EXPECT_EQ(CanonicalCharset("ISO-8859-1"), "windows-1252");
  EXPECT_EQ(CanonicalCharset(" latin1 "), "windows-1252");
  EXPECT_EQ(CanonicalCharset("US-ASCII"), "windows-1252");
  EXPECT_EQ(CanonicalCharset("UTF8"), "utf-8");
  EXPECT_EQ(CanonicalCharset("Shift_JIS"), "shift_jis");
  EXPECT_EQ(CanonicalCharset("gb2312"), "gbk");
  EXPECT_EQ(CanonicalCharset("iso-8859-9"), "windows-1254");
  EXPECT_EQ(CanonicalCharset("klingon"), "");
}

TEST(Charset, ContentTypeCharsetParameter) {
  using internal::ContentTypeCharset;
  EXPECT_EQ(ContentTypeCharset("text/html; charset=UTF-8"), "UTF-8");
  EXPECT_EQ(ContentTypeCharset("text/html;CHARSET=\"koi8-r\"; x=y"), "koi8-r");
  EXPECT_EQ(ContentTypeCharset("text/html; q=1; charset = latin1 "), "latin1");
  EXPECT_EQ(ContentTypeCharset("text/html"), "");
  EXPECT_EQ(ContentTypeCharset(""), "");
}

TEST(Charset, FromHeader) {
  EXPECT_EQ(DetectCharset("<p>caf\xE9</p>", "text/html; charset=iso-8859-1"), "windows-1252");
  // The header beats a <meta>.
  EXPECT_EQ(DetectCharset("<meta charset=utf-8>", "text/html; charset=koi8-r"), "koi8-r");
}

TEST(Charset, Html5_BomWinsOverHeader) {
  EXPECT_EQ(DetectCharset("\xEF\xBB\xBF<p>", "text/html; charset=koi8-r"), "utf-8");
  EXPECT_EQ(DetectCharset("\xFF\xFE<\0p\0", ""), "utf-16le");
  EXPECT_EQ(DetectCharset("\xFE\xFF\0<\0p", ""), "utf-16be");
}

TEST(Charset, Html5_PrescanMetaCharset) {
  EXPECT_EQ(DetectCharset("<html><head><meta charset='windows-1251'>", ""), "windows-1251");
  EXPECT_EQ(DetectCharset("<META CHARSET=KOI8-R>", ""), "koi8-r");
}

TEST(Charset, Html5_PrescanHttpEquiv) {
  EXPECT_EQ(DetectCharset("<meta http-equiv=\"Content-Type\" content=\"text/html; "
                          "charset=Shift_JIS\">",
                          ""),
            "shift_jis");
  // content without http-equiv=content-type does not count.
  EXPECT_EQ(DetectCharset("<meta content=\"text/html; charset=koi8-r\">", ""), "utf-8");
}

TEST(Charset, Html5_PrescanSkipsCommentsAndAttributes) {
  EXPECT_EQ(DetectCharset("<!-- <meta charset=koi8-r> --><meta charset=iso-8859-2>", ""),
            "iso-8859-2");
  EXPECT_EQ(DetectCharset("<div title='<meta charset=koi8-r>'><meta charset=latin2>", ""),
            "iso-8859-2");
}

TEST(Charset, Html5_PrescanUtf16MeansUtf8) {
  EXPECT_EQ(DetectCharset("<meta charset=utf-16>", ""), "utf-8");
  EXPECT_EQ(DetectCharset("<meta charset=x-user-defined>", ""), "windows-1252");
}

TEST(Charset, Html5_PrescanStopsAt1024Bytes) {
  std::string body = "<p>" + std::string(1100, 'x') + "<meta charset=koi8-r>";
  EXPECT_EQ(DetectCharset(body, ""), "utf-8");
}

TEST(Charset, FallbackValidUtf8) { EXPECT_EQ(DetectCharset("<p>caf\xC3\xA9</p>", ""), "utf-8"); }

TEST(Charset, FallbackUchardetWindows1251) {
  std::string page = "<html><body><p>" + Encode(kRussian, "CP1251") + "</p></body></html>";
  EXPECT_EQ(DetectCharset(page, ""), "windows-1251");
  PageInfo p = ExtractHtml(page, "");
  EXPECT_EQ(p.charset, "windows-1251");
  EXPECT_EQ(p.text, kRussian);
}

TEST(Charset, Windows1251PageWithMeta) {
  std::string page = "<meta charset=windows-1251><title>" + Encode("Привет", "CP1251") +
                     "</title><a href='/" + Encode("поиск", "CP1251") + "'>x</a>";
  PageInfo p = ExtractHtml(page, "");
  EXPECT_EQ(p.charset, "windows-1251");
  EXPECT_EQ(p.title, "Привет");
  ASSERT_EQ(p.links.size(), 1u);
  EXPECT_EQ(p.links[0].href, "/поиск");
}

TEST(Charset, Iso88591IsWindows1252) {
  // 0x80 is the euro sign in windows-1252 (not a C1 control as in ISO-8859-1 proper).
  EXPECT_EQ(ConvertToUtf8("\x80 caf\xE9 \x81", "iso-8859-1"), "\xE2\x82\xAC caf\xC3\xA9 \xC2\x81");
}

TEST(Charset, InvalidUtf8Replaced) {
  EXPECT_EQ(ConvertToUtf8("a\xFF"
                          "b\xC3",
                          "utf-8"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  // Maximal subpart: E1 80 followed by 'x' is one replacement, surrogates are invalid.
  EXPECT_EQ(ConvertToUtf8("\xE1\x80x\xED\xA0\x80", "utf-8"),
            "\xEF\xBF\xBDx\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Charset, InvalidMultibyteReplaced) {
  std::string sjis = Encode("日本", "SHIFT_JIS") + "\xFF" + "x";
  EXPECT_EQ(ConvertToUtf8(sjis, "shift_jis"), "日本\xEF\xBF\xBDx");
}

TEST(Charset, Utf16Conversion) {
  EXPECT_EQ(ConvertToUtf8(std::string_view("\xFF\xFEh\0i\0", 6), "utf-16le"), "hi");
  PageInfo p = ExtractHtml(std::string_view("\xFE\xFF\0<\0a\0 \0h\0r\0e\0f\0=\0x\0>", 22), "");
  EXPECT_EQ(p.charset, "utf-16be");
  ASSERT_EQ(p.links.size(), 1u);
  EXPECT_EQ(p.links[0].href, "x");
}

TEST(Charset, Koi8rFromHeader) {
  PageInfo p = ExtractHtml("<p>" + Encode("мир", "KOI8-R") + "</p>", "text/html;charset=KOI8-R");
  EXPECT_EQ(p.charset, "koi8-r");
  EXPECT_EQ(p.text, "мир");
}

TEST(Charset, UnknownLabelFallsBack) {
  EXPECT_EQ(DetectCharset("<p>x</p>", "text/html; charset=klingon"), "utf-8");
  EXPECT_EQ(ConvertToUtf8("caf\xE9", "klingon"), "caf\xC3\xA9");
}

}  // namespace
}  // namespace harvest::extract
