// harvest url parse|canon|surt: the URL component from the command line, one URL or JSON lines.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "url/url.h"

namespace harvest::cli {
namespace {

enum class Mode { kParse, kCanon, kSurt };

struct UrlOpts {
  std::string url;
  std::string base;
  bool jsonl = false;
};

// Runs one input: the href (parse, canon) or SURT key (surt); nullopt on failure.
std::optional<std::string> RunOne(Mode mode, const std::string& input,
                                  const std::string* base_text) {
  std::optional<url::Url> base;
  if (base_text != nullptr) {
    base = url::Parse(*base_text);
    if (!base) return std::nullopt;
  }
  std::optional<url::Url> u = mode == Mode::kParse
                                  ? url::Parse(input, base ? &*base : nullptr)
                                  : url::ParseCanonical(input, base ? &*base : nullptr);
  if (!u) return std::nullopt;
  return mode == Mode::kSurt ? url::Surt(*u) : u->href();
}

int RunJsonl(Mode mode) {
  using Json = nlohmann::json;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    Json in = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    Json out;
    if (!in.is_object() || !in.contains("input") || !in["input"].is_string()) {
      out = {{"failure", true}, {"error", "expected {\"input\": string, \"base\": string|null}"}};
    } else {
      std::string base_text;
      bool has_base = in.contains("base") && in["base"].is_string();
      if (has_base) base_text = in["base"].get<std::string>();
      std::optional<std::string> r =
          RunOne(mode, in["input"].get<std::string>(), has_base ? &base_text : nullptr);
      if (!r) {
        out = {{"failure", true}};
      } else {
        out = {{mode == Mode::kSurt ? "surt" : "href", *r}};
      }
    }
    std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
  }
  std::cout.flush();
  return kExitOk;
}

struct ModeSpec {
  Mode mode;
  CLI::App* sub;
  std::shared_ptr<UrlOpts> opts;
};

int RunMode(const ModeSpec& m) {
  const char* command = m.mode == Mode::kParse   ? "url parse"
                        : m.mode == Mode::kCanon ? "url canon"
                                                 : "url surt";
  if (m.opts->jsonl) {
    if (!m.opts->url.empty()) return UsageError(command, "give either a URL or --jsonl, not both");
    return RunJsonl(m.mode);
  }
  if (m.opts->url.empty()) return UsageError(command, "a URL is required (or --jsonl)");
  std::optional<std::string> r =
      RunOne(m.mode, m.opts->url, m.sub->count("--base") > 0 ? &m.opts->base : nullptr);
  if (!r) {
    std::printf("failure\n");
    return kExitFailure;
  }
  std::printf("%s\n", r->c_str());
  return kExitOk;
}

ModeSpec AddMode(CLI::App* app, Mode mode, const char* name, const char* help) {
  auto opts = std::make_shared<UrlOpts>();
  CLI::App* sub = app->add_subcommand(name, help);
  sub->add_option("url", opts->url, "The URL (omit with --jsonl)");
  sub->add_option("--base", opts->base, "Base URL to resolve the URL against");
  sub->add_flag("--jsonl", opts->jsonl,
                "Read {\"input\": ..., \"base\": ...} lines on stdin and write one JSON "
                "object per line: {\"href\": ...} (surt: {\"surt\": ...}) or {\"failure\": true}");
  return {mode, sub, opts};
}

CommandRegistration reg("url", "Parse, canonicalize and key URLs (WHATWG URL Standard)",
                        [](CLI::App* app) -> CommandRunner {
                          app->require_subcommand(1);
                          std::vector<ModeSpec> modes = {
                              AddMode(app, Mode::kParse, "parse",
                                      "Print the WHATWG serialization of a URL, or 'failure'"),
                              AddMode(app, Mode::kCanon, "canon",
                                      "Print the crawler-canonical form of a URL, or 'failure'"),
                              AddMode(
                                  app, Mode::kSurt, "surt",
                                  "Print the SURT key (CDXJ) of the canonical URL, or 'failure'"),
                          };
                          return [modes]() -> int {
                            for (const ModeSpec& m : modes) {
                              if (m.sub->parsed()) return RunMode(m);
                            }
                            return UsageError("url", "expected parse, canon or surt");
                          };
                        });

}  // namespace
}  // namespace harvest::cli
