// WHATWG Encoding labels → canonical names, and canonical names → glibc iconv names.
#include <utility>

#include "extract/charset.h"
#include "extract/extract.h"

namespace harvest::extract {
namespace internal {
namespace {

bool IsLabelSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

bool EqualsNoCaseAscii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] + 32) : a[i];
    char y = (b[i] >= 'A' && b[i] <= 'Z') ? static_cast<char>(b[i] + 32) : b[i];
    if (x != y) return false;
  }
  return true;
}

struct LabelEntry {
  std::string_view label;
  std::string_view name;
};

// WHATWG Encoding §4.2 labels (the common ones; all canonical names are present).
// clang-format off: a hand-aligned table
constexpr LabelEntry kLabels[] = {
    {"unicode-1-1-utf-8", "utf-8"},
    {"unicode11utf8", "utf-8"},
    {"unicode20utf8", "utf-8"},
    {"utf-8", "utf-8"},
    {"utf8", "utf-8"},
    {"x-unicode20utf8", "utf-8"},
    {"866", "ibm866"},
    {"cp866", "ibm866"},
    {"csibm866", "ibm866"},
    {"ibm866", "ibm866"},
    {"csisolatin2", "iso-8859-2"},
    {"iso-8859-2", "iso-8859-2"},
    {"iso-ir-101", "iso-8859-2"},
    {"iso8859-2", "iso-8859-2"},
    {"iso88592", "iso-8859-2"},
    {"iso_8859-2", "iso-8859-2"},
    {"l2", "iso-8859-2"},
    {"latin2", "iso-8859-2"},
    {"csisolatin3", "iso-8859-3"},
    {"iso-8859-3", "iso-8859-3"},
    {"iso8859-3", "iso-8859-3"},
    {"iso_8859-3", "iso-8859-3"},
    {"l3", "iso-8859-3"},
    {"latin3", "iso-8859-3"},
    {"csisolatin4", "iso-8859-4"},
    {"iso-8859-4", "iso-8859-4"},
    {"iso8859-4", "iso-8859-4"},
    {"iso_8859-4", "iso-8859-4"},
    {"l4", "iso-8859-4"},
    {"latin4", "iso-8859-4"},
    {"csisolatincyrillic", "iso-8859-5"},
    {"cyrillic", "iso-8859-5"},
    {"iso-8859-5", "iso-8859-5"},
    {"iso8859-5", "iso-8859-5"},
    {"iso_8859-5", "iso-8859-5"},
    {"arabic", "iso-8859-6"},
    {"asmo-708", "iso-8859-6"},
    {"iso-8859-6", "iso-8859-6"},
    {"iso8859-6", "iso-8859-6"},
    {"iso_8859-6", "iso-8859-6"},
    {"greek", "iso-8859-7"},
    {"greek8", "iso-8859-7"},
    {"iso-8859-7", "iso-8859-7"},
    {"iso8859-7", "iso-8859-7"},
    {"iso_8859-7", "iso-8859-7"},
    {"hebrew", "iso-8859-8"},
    {"iso-8859-8", "iso-8859-8"},
    {"iso8859-8", "iso-8859-8"},
    {"iso_8859-8", "iso-8859-8"},
    {"visual", "iso-8859-8"},
    {"iso-8859-8-i", "iso-8859-8-i"},
    {"logical", "iso-8859-8-i"},
    {"iso-8859-10", "iso-8859-10"},
    {"iso8859-10", "iso-8859-10"},
    {"latin6", "iso-8859-10"},
    {"iso-8859-13", "iso-8859-13"},
    {"iso8859-13", "iso-8859-13"},
    {"iso-8859-14", "iso-8859-14"},
    {"iso8859-14", "iso-8859-14"},
    {"csisolatin9", "iso-8859-15"},
    {"iso-8859-15", "iso-8859-15"},
    {"iso8859-15", "iso-8859-15"},
    {"iso_8859-15", "iso-8859-15"},
    {"l9", "iso-8859-15"},
    {"iso-8859-16", "iso-8859-16"},
    {"cskoi8r", "koi8-r"},
    {"koi", "koi8-r"},
    {"koi8", "koi8-r"},
    {"koi8-r", "koi8-r"},
    {"koi8_r", "koi8-r"},
    {"koi8-ru", "koi8-u"},
    {"koi8-u", "koi8-u"},
    {"csmacintosh", "macintosh"},
    {"mac", "macintosh"},
    {"macintosh", "macintosh"},
    {"x-mac-roman", "macintosh"},
    {"dos-874", "windows-874"},
    {"iso-8859-11", "windows-874"},
    {"tis-620", "windows-874"},
    {"windows-874", "windows-874"},
    {"cp1250", "windows-1250"},
    {"windows-1250", "windows-1250"},
    {"x-cp1250", "windows-1250"},
    {"cp1251", "windows-1251"},
    {"windows-1251", "windows-1251"},
    {"x-cp1251", "windows-1251"},
    {"ansi_x3.4-1968", "windows-1252"},
    {"ascii", "windows-1252"},
    {"cp1252", "windows-1252"},
    {"cp819", "windows-1252"},
    {"csisolatin1", "windows-1252"},
    {"ibm819", "windows-1252"},
    {"iso-8859-1", "windows-1252"},
    {"iso-ir-100", "windows-1252"},
    {"iso8859-1", "windows-1252"},
    {"iso88591", "windows-1252"},
    {"iso_8859-1", "windows-1252"},
    {"iso_8859-1:1987", "windows-1252"},
    {"l1", "windows-1252"},
    {"latin1", "windows-1252"},
    {"us-ascii", "windows-1252"},
    {"windows-1252", "windows-1252"},
    {"x-cp1252", "windows-1252"},
    {"cp1253", "windows-1253"},
    {"windows-1253", "windows-1253"},
    {"cp1254", "windows-1254"},
    {"iso-8859-9", "windows-1254"},
    {"latin5", "windows-1254"},
    {"windows-1254", "windows-1254"},
    {"cp1255", "windows-1255"},
    {"windows-1255", "windows-1255"},
    {"cp1256", "windows-1256"},
    {"windows-1256", "windows-1256"},
    {"cp1257", "windows-1257"},
    {"windows-1257", "windows-1257"},
    {"cp1258", "windows-1258"},
    {"windows-1258", "windows-1258"},
    {"x-mac-cyrillic", "x-mac-cyrillic"},
    {"x-mac-ukrainian", "x-mac-cyrillic"},
    {"chinese", "gbk"},
    {"csgb2312", "gbk"},
    {"gb2312", "gbk"},
    {"gb_2312", "gbk"},
    {"gb_2312-80", "gbk"},
    {"gbk", "gbk"},
    {"x-gbk", "gbk"},
    {"gb18030", "gb18030"},
    {"big5", "big5"},
    {"big5-hkscs", "big5"},
    {"cn-big5", "big5"},
    {"csbig5", "big5"},
    {"x-x-big5", "big5"},
    {"cseucpkdfmtjapanese", "euc-jp"},
    {"euc-jp", "euc-jp"},
    {"x-euc-jp", "euc-jp"},
    {"csiso2022jp", "iso-2022-jp"},
    {"iso-2022-jp", "iso-2022-jp"},
    {"csshiftjis", "shift_jis"},
    {"ms932", "shift_jis"},
    {"ms_kanji", "shift_jis"},
    {"shift-jis", "shift_jis"},
    {"shift_jis", "shift_jis"},
    {"sjis", "shift_jis"},
    {"windows-31j", "shift_jis"},
    {"x-sjis", "shift_jis"},
    {"cseuckr", "euc-kr"},
    {"euc-kr", "euc-kr"},
    {"korean", "euc-kr"},
    {"ks_c_5601-1987", "euc-kr"},
    {"ksc5601", "euc-kr"},
    {"windows-949", "euc-kr"},
    {"unicodefffe", "utf-16be"},
    {"utf-16be", "utf-16be"},
    {"csunicode", "utf-16le"},
    {"ucs-2", "utf-16le"},
    {"unicode", "utf-16le"},
    {"unicodefeff", "utf-16le"},
    {"utf-16", "utf-16le"},
    {"utf-16le", "utf-16le"},
    {"x-user-defined", "x-user-defined"},
};
// clang-format on

}  // namespace

// glibc iconv names for canonical names that need iconv (nullptr = decoded here).
const char* IconvName(std::string_view name) {
  static constexpr std::pair<std::string_view, const char*> kMap[] = {
      {"ibm866", "IBM866"},
      {"iso-8859-2", "ISO-8859-2"},
      {"iso-8859-3", "ISO-8859-3"},
      {"iso-8859-4", "ISO-8859-4"},
      {"iso-8859-5", "ISO-8859-5"},
      {"iso-8859-6", "ISO-8859-6"},
      {"iso-8859-7", "ISO-8859-7"},
      {"iso-8859-8", "ISO-8859-8"},
      {"iso-8859-8-i", "ISO-8859-8"},
      {"iso-8859-10", "ISO-8859-10"},
      {"iso-8859-13", "ISO-8859-13"},
      {"iso-8859-14", "ISO-8859-14"},
      {"iso-8859-15", "ISO-8859-15"},
      {"iso-8859-16", "ISO-8859-16"},
      {"koi8-r", "KOI8-R"},
      {"koi8-u", "KOI8-U"},
      {"macintosh", "MACINTOSH"},
      {"windows-874", "CP874"},
      {"windows-1250", "CP1250"},
      {"windows-1251", "CP1251"},
      {"windows-1253", "CP1253"},
      {"windows-1254", "CP1254"},
      {"windows-1255", "CP1255"},
      {"windows-1256", "CP1256"},
      {"windows-1257", "CP1257"},
      {"windows-1258", "CP1258"},
      {"x-mac-cyrillic", "MAC-CYRILLIC"},
      // WHATWG's gbk decoder is the gb18030 decoder.
      {"gbk", "GB18030"},
      {"gb18030", "GB18030"},
      {"big5", "BIG5-HKSCS"},
      {"euc-jp", "EUC-JP"},
      {"iso-2022-jp", "ISO-2022-JP"},
      {"shift_jis", "CP932"},
      {"euc-kr", "CP949"},
      {"utf-16be", "UTF-16BE"},
      {"utf-16le", "UTF-16LE"},
  };
  for (const auto& [n, iconv_name] : kMap) {
    if (n == name) return iconv_name;
  }
  return nullptr;
}

}  // namespace internal

std::string CanonicalCharset(std::string_view label) {
  while (!label.empty() && internal::IsLabelSpace(label.front())) label.remove_prefix(1);
  while (!label.empty() && internal::IsLabelSpace(label.back())) label.remove_suffix(1);
  for (const auto& e : internal::kLabels) {
    if (internal::EqualsNoCaseAscii(e.label, label)) return std::string(e.name);
  }
  return {};
}

}  // namespace harvest::extract
