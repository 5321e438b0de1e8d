#pragma once
// Looking for arguments in a bwrap command line, for the tests of what builds one.

#include <algorithm>
#include <string>
#include <vector>

namespace caretz {

using Args = std::vector<std::string>;

// Index of the first place where `seq` occurs in `args`, or -1.
inline long find_seq(const Args& args, const Args& seq) {
    auto it = std::search(args.begin(), args.end(), seq.begin(), seq.end());
    return it == args.end() ? -1 : it - args.begin();
}

}  // namespace caretz
