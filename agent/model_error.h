#pragma once

#include <stdexcept>

namespace caretz {

// The model API could not give a usable answer; what() is one line for the user.
class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace caretz
