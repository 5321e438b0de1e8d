#pragma once

#include <set>
#include <string>
#include <vector>

namespace caretz {

// Commands the user allowed outside the sandbox for this session: exact text, byte for byte.
// Another command, even the same program with other arguments, is not covered.
class SessionAllowances {
public:
    void allow(const std::string& command) { allowed_.insert(command); }
    bool covers(const std::string& command) const { return allowed_.count(command) > 0; }
    std::vector<std::string> list() const { return {allowed_.begin(), allowed_.end()}; }

private:
    std::set<std::string> allowed_;
};

}  // namespace caretz
