// Key layouts and record codecs of the state database.
#include <algorithm>
#include <bit>
#include <utility>

#include "state/internal.h"

namespace harvest::state {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutSignedVarint(std::string* out, int64_t v) {
  PutVarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void PutBytes(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}

void PutBigEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t ReadBigEndian(std::string_view s, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes && i < static_cast<int>(s.size()); ++i) {
    v = (v << 8) | static_cast<uint8_t>(s[i]);
  }
  return v;
}

bool Reader::Varint(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
    if (data_.empty()) return false;
    const auto b = static_cast<uint8_t>(data_.front());
    data_.remove_prefix(1);
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

bool Reader::SignedVarint(int64_t* v) {
  uint64_t u = 0;
  if (!Varint(&u)) return false;
  *v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
  return true;
}

bool Reader::Int(int* v) {
  int64_t x = 0;
  if (!SignedVarint(&x) || x < INT32_MIN || x > INT32_MAX) return false;
  *v = static_cast<int>(x);
  return true;
}

bool Reader::Fixed(size_t n, std::string* s) {
  if (n > data_.size()) return false;
  s->assign(data_.substr(0, n));
  data_.remove_prefix(n);
  return true;
}

bool Reader::View(size_t n, std::string_view* s) {
  if (n > data_.size()) return false;
  *s = data_.substr(0, n);
  data_.remove_prefix(n);
  return true;
}

bool Reader::Bytes(std::string* s) {
  uint64_t n = 0;
  if (!Varint(&n) || n > data_.size()) return false;
  s->assign(data_.substr(0, n));
  data_.remove_prefix(n);
  return true;
}

QueueKeyBytes MakeQueueKey(int bits, uint32_t host, uint8_t cls, uint64_t seq) {
  QueueKeyBytes k;
  auto put = [&k](size_t at, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) {
      k.data[at++] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
  };
  put(0, EpochOf(bits, seq), 4);
  put(4, host, 4);
  k.data[8] = static_cast<char>(cls);
  put(9, seq, 8);
  return k;
}

std::string QueueKey(int bits, uint32_t host, uint8_t cls, uint64_t seq) {
  const QueueKeyBytes k = MakeQueueKey(bits, host, cls, seq);
  return std::string(k.data, kQueueKeySize);
}

bool ParseQueueKey(int bits, std::string_view key, uint32_t* host, uint8_t* cls, uint64_t* seq) {
  if (key.size() != kQueueKeySize) return false;
  *host = static_cast<uint32_t>(ReadBigEndian(key.substr(4), 4));
  *cls = static_cast<uint8_t>(key[8]);
  *seq = ReadBigEndian(key.substr(9), 8);
  return EpochOf(bits, *seq) == ReadBigEndian(key, 4);
}

std::string SeenKey(uint64_t fp) {
  std::string k;
  PutBigEndian(&k, fp, 8);
  return k;
}

std::string HostKey(char kind, std::string_view name) {
  std::string k(1, kind);
  k.append(name);
  return k;
}

std::string HostCountersKey(uint64_t host_hash) {
  std::string k(1, 'c');
  PutBigEndian(&k, host_hash, 8);
  return k;
}

std::string HostIdKey(uint32_t id) {
  std::string k(1, 'n');
  PutBigEndian(&k, id, 4);
  return k;
}

namespace {

// Queue entries are most of what admission writes (WAL, memtable, every compaction): the
// URL's origin when it is the item's host key (its politeness key, known from the entry's
// host id) and the part of `via` it shares with the URL are left out.
constexpr uint8_t kSitemapFlag = 1;
constexpr uint8_t kRecrawlFlag = 0x80;  // a scheduled recrawl (docs/freshness.md)
constexpr uint8_t kUrlFull = 0, kUrlAfterHost = 1;

uint8_t UrlForm(const frontier::UrlItem& item, size_t* skip) {
  const std::string_view url = item.url;
  const std::string_view host = item.host;
  if (!host.empty() && url.size() > host.size() && url.substr(0, host.size()) == host &&
      url[host.size()] == '/') {
    *skip = host.size();
    return kUrlAfterHost;
  }
  *skip = 0;
  return kUrlFull;
}

}  // namespace

std::string EncodeItem(const frontier::UrlItem& item) {
  std::string v;
  EncodeItemTo(item, &v);
  return v;
}

void EncodeItemTo(const frontier::UrlItem& item, std::string* out) {
  std::string& v = *out;
  v.clear();
  size_t skip = 0;
  const uint8_t form = UrlForm(item, &skip);
  size_t shared = 0;
  const size_t max_shared = std::min(item.url.size(), item.via.size());
  while (shared < max_shared && item.url[shared] == item.via[shared]) ++shared;
  v.reserve(item.url.size() - skip + item.via.size() - shared + 24);
  v.push_back(static_cast<char>((form << 1) | (item.sitemap ? kSitemapFlag : 0) |
                                (item.recrawl ? kRecrawlFlag : 0)));
  PutBytes(&v, std::string_view(item.url).substr(skip));
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<char>((item.fp >> (8 * i)) & 0xff));
  PutSignedVarint(&v, item.depth);
  PutSignedVarint(&v, item.priority);
  PutSignedVarint(&v, item.attempts);
  PutSignedVarint(&v, item.hops);
  PutVarint(&v, shared);
  PutBytes(&v, std::string_view(item.via).substr(shared));
}

bool DecodeItem(std::string_view value, frontier::UrlItem* item) {
  if (value.empty()) return false;
  const auto flags = static_cast<uint8_t>(value[0]);
  const uint8_t form = (flags & ~kRecrawlFlag) >> 1;
  if (form > kUrlAfterHost || (form != kUrlFull && item->host.empty())) return false;
  Reader r(value.substr(1));
  std::string rest;
  if (!r.Bytes(&rest)) return false;
  item->url = form == kUrlFull ? std::string() : item->host;
  item->url += rest;
  item->sitemap = (flags & kSitemapFlag) != 0;
  item->recrawl = (flags & kRecrawlFlag) != 0;
  std::string fp;
  uint64_t shared = 0;
  if (!r.Fixed(8, &fp) || !r.Int(&item->depth) || !r.Int(&item->priority) ||
      !r.Int(&item->attempts) || !r.Int(&item->hops) || !r.Varint(&shared) ||
      shared > item->url.size() || !r.Bytes(&rest)) {
    return false;
  }
  item->fp = 0;
  for (int i = 7; i >= 0; --i) item->fp = (item->fp << 8) | static_cast<uint8_t>(fp[i]);
  item->via.assign(item->url, 0, shared);
  item->via += rest;
  return true;
}

bool ItemFingerprint(std::string_view value, uint64_t* fp) {
  if (value.empty()) return false;
  Reader r(value.substr(1));
  std::string rest, bytes;
  if (!r.Bytes(&rest) || !r.Fixed(8, &bytes)) return false;
  *fp = 0;
  for (int i = 7; i >= 0; --i) *fp = (*fp << 8) | static_cast<uint8_t>(bytes[i]);
  return true;
}

std::string EncodeSeen(const SeenRecord& s) {
  std::string v;
  v.push_back(static_cast<char>(s.state));
  if (s.state == SeenRecord::State::kQueued && s.status == 0) return v;  // the common case
  PutSignedVarint(&v, s.status);
  PutSignedVarint(&v, s.fetch_time_us);
  PutSignedVarint(&v, s.next_due_us);
  PutBytes(&v, s.etag);
  PutBytes(&v, s.last_modified);
  PutSignedVarint(&v, s.interval_ms);
  PutBytes(&v, s.payload_digest);
  PutBigEndian(&v, s.simhash, 8);
  PutVarint(&v, s.changes);
  PutVarint(&v, s.unchanged);
  return v;
}

bool DecodeSeen(std::string_view value, SeenRecord* s) {
  if (value.empty() || static_cast<uint8_t>(value[0]) > 1) return false;
  s->state = static_cast<SeenRecord::State>(value[0]);
  Reader r(value.substr(1));
  if (r.done()) return true;
  if (!(r.Int(&s->status) && r.SignedVarint(&s->fetch_time_us) && r.SignedVarint(&s->next_due_us) &&
        r.Bytes(&s->etag) && r.Bytes(&s->last_modified))) {
    return false;
  }
  if (r.done()) return true;  // written before recrawling: no schedule fields
  std::string hash;
  uint64_t changes = 0, unchanged = 0;
  if (!(r.SignedVarint(&s->interval_ms) && r.Bytes(&s->payload_digest) && r.Fixed(8, &hash) &&
        r.Varint(&changes) && r.Varint(&unchanged))) {
    return false;
  }
  s->simhash = ReadBigEndian(hash, 8);
  s->changes = static_cast<uint32_t>(changes);
  s->unchanged = static_cast<uint32_t>(unchanged);
  return true;
}

std::string ScheduleKey(int64_t due_us, uint64_t fp) {
  std::string k;
  k.reserve(kScheduleKeySize);
  PutBigEndian(&k, static_cast<uint64_t>(std::max<int64_t>(due_us, 0)), 8);
  PutBigEndian(&k, fp, 8);
  return k;
}

std::string EncodeScheduled(const frontier::UrlItem& item) {
  std::string v;
  PutBytes(&v, item.host);
  v += EncodeItem(item);
  return v;
}

bool DecodeScheduled(std::string_view value, frontier::UrlItem* item) {
  Reader r(value);
  if (!r.Bytes(&item->host)) return false;
  // The host's length prefix and bytes precede the item.
  std::string prefix;
  PutBytes(&prefix, item->host);
  return DecodeItem(value.substr(prefix.size()), item);
}

std::string EncodeSimHash(const SimHashRecord& rec) {
  std::string v;
  PutBigEndian(&v, rec.hash, 8);
  PutBytes(&v, rec.uri);
  PutBytes(&v, rec.record_id);
  PutSignedVarint(&v, rec.date_us);
  return v;
}

bool DecodeSimHash(std::string_view value, SimHashRecord* rec) {
  Reader r(value);
  std::string hash;
  if (!r.Fixed(8, &hash)) return false;
  rec->hash = ReadBigEndian(hash, 8);
  return r.Bytes(&rec->uri) && r.Bytes(&rec->record_id) && r.SignedVarint(&rec->date_us);
}

std::string EncodePoliteness(const HostPoliteness& p) {
  std::string v;
  PutSignedVarint(&v, p.next_allowed_us);
  PutSignedVarint(&v, p.crawl_delay_ms);
  PutBytes(&v, p.dead_reason);
  PutBytes(&v, p.dead_detail);
  return v;
}

bool DecodePoliteness(std::string_view value, HostPoliteness* p) {
  Reader r(value);
  return r.SignedVarint(&p->next_allowed_us) && r.SignedVarint(&p->crawl_delay_ms) &&
         r.Bytes(&p->dead_reason) && r.Bytes(&p->dead_detail);
}

std::string EncodeUpgrade(const UpgradeRecord& u) {
  std::string v;
  PutSignedVarint(&v, u.hsts_until_us);
  PutSignedVarint(&v, u.include_subdomains ? 1 : 0);
  PutSignedVarint(&v, u.streak);
  PutSignedVarint(&v, u.learnt_until_us);
  return v;
}

bool DecodeUpgrade(std::string_view value, UpgradeRecord* u) {
  Reader r(value);
  int64_t include = 0;
  if (!r.SignedVarint(&u->hsts_until_us) || !r.SignedVarint(&include) || !r.Int(&u->streak) ||
      !r.SignedVarint(&u->learnt_until_us)) {
    return false;
  }
  u->include_subdomains = include != 0;
  return true;
}

std::string EncodeRobots(const RobotsRecord& rr) {
  std::string v;
  v.reserve(rr.body.size() + 24);
  PutSignedVarint(&v, rr.status);
  PutSignedVarint(&v, rr.redirects);
  PutSignedVarint(&v, rr.failures);
  PutSignedVarint(&v, rr.expiry_us);
  PutBytes(&v, rr.body);
  PutSignedVarint(&v, rr.outage_since_us);
  PutSignedVarint(&v, rr.unreachable);
  return v;
}

bool DecodeRobots(std::string_view value, RobotsRecord* rr) {
  Reader r(value);
  if (!r.Int(&rr->status) || !r.Int(&rr->redirects) || !r.Int(&rr->failures) ||
      !r.SignedVarint(&rr->expiry_us) || !r.Bytes(&rr->body)) {
    return false;
  }
  // The outage fields came later: a record written before them ends here.
  rr->outage_since_us = 0;
  rr->unreachable = 0;
  if (r.done()) return true;
  return r.SignedVarint(&rr->outage_since_us) && r.Int(&rr->unreachable);
}

// Format 2 ends with the varint 2; format 1 (day, URLs admitted that day, admitted, fetched)
// counted the day's admissions, not its fetches: decoded with no fetches today.
std::string EncodeCounters(const frontier::HostCounters& c) {
  std::string v;
  PutSignedVarint(&v, c.day);
  PutVarint(&v, c.fetched_today);
  PutVarint(&v, c.admitted);
  PutVarint(&v, c.fetched);
  PutVarint(&v, 2);
  return v;
}

bool DecodeCounters(std::string_view value, frontier::HostCounters* c) {
  Reader r(value);
  if (!r.SignedVarint(&c->day) || !r.Varint(&c->fetched_today) || !r.Varint(&c->admitted) ||
      !r.Varint(&c->fetched)) {
    return false;
  }
  if (r.done()) {
    c->fetched_today = 0;  // format 1
    return true;
  }
  uint64_t format = 0;
  return r.Varint(&format) && format == 2;
}

std::string EncodeBreaker(const BreakerRecord& b) {
  std::string v;
  PutVarint(&v, b.open ? 1 : 0);
  PutSignedVarint(&v, b.open_until_us);
  PutVarint(&v, b.ring_pos);
  PutVarint(&v, b.ring_count);
  PutVarint(&v, b.ring_errors);
  PutVarint(&v, b.ring_bits);
  return v;
}

bool DecodeBreaker(std::string_view value, BreakerRecord* b) {
  Reader r(value);
  uint64_t open = 0, pos = 0, count = 0, errors = 0;
  if (!r.Varint(&open) || !r.SignedVarint(&b->open_until_us) || !r.Varint(&pos) ||
      !r.Varint(&count) || !r.Varint(&errors) || !r.Varint(&b->ring_bits)) {
    return false;
  }
  b->open = open != 0;
  b->ring_pos = static_cast<uint32_t>(pos);
  b->ring_count = static_cast<uint32_t>(count);
  b->ring_errors = static_cast<uint32_t>(errors);
  return true;
}

std::string EncodeDigest(const DigestRecord& d) {
  std::string v;
  PutBytes(&v, d.uri);
  PutSignedVarint(&v, d.date_us);
  PutBytes(&v, d.record_id);
  return v;
}

bool DecodeDigest(std::string_view value, DigestRecord* d) {
  Reader r(value);
  return r.Bytes(&d->uri) && r.SignedVarint(&d->date_us) && r.Bytes(&d->record_id);
}

namespace {
constexpr uint64_t kOverrideFormat = 1;
}  // namespace

std::string EncodeOverride(const HostOverride& o) {
  std::string out;
  PutVarint(&out, kOverrideFormat);
  PutSignedVarint(&out, o.crawl_delay_ms);
  PutVarint(&out, std::bit_cast<uint64_t>(o.weight));
  PutVarint(&out, o.blocked ? 1 : 0);
  return out;
}

bool DecodeOverride(std::string_view value, HostOverride* o) {
  Reader r(value);
  uint64_t format = 0, weight = 0, blocked = 0;
  if (!r.Varint(&format) || format != kOverrideFormat || !r.SignedVarint(&o->crawl_delay_ms) ||
      !r.Varint(&weight) || !r.Varint(&blocked)) {
    return false;
  }
  o->weight = std::bit_cast<double>(weight);
  o->blocked = blocked != 0;
  return true;
}

}  // namespace harvest::state
