// The resolve file: which of the test web's listening addresses each host is reached at
// (format in docs/testweb.md).
#include <string>
#include <vector>

#include "testweb/testweb.h"

namespace harvest::testweb {

std::string ResolveFileText(const Site& site, const std::vector<std::string>& addresses) {
  const std::vector<HostInfo>& hosts = site.hosts();
  std::string out;
  out.reserve(64 + hosts.size() * (hosts[0].name.size() + addresses[0].size() + 4));
  out += "# harvest testweb resolve file: HOST ADDRESS:PORT; " + std::to_string(hosts.size()) +
         " hosts on " + std::to_string(addresses.size()) + " address(es)\n";
  // Normal hosts come first in Site::hosts(), so a normal host's index is its number.
  for (size_t i = 0; i < hosts.size(); ++i) {
    out += hosts[i].name;
    out += ' ';
    out += hosts[i].normal ? addresses[i % addresses.size()] : addresses[0];
    out += '\n';
  }
  return out;
}

}  // namespace harvest::testweb
