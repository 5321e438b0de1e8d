#include "agent/conversation.h"

namespace caretz {

nlohmann::json arguments_object(const std::string& arguments) {
    nlohmann::json parsed = nlohmann::json::parse(arguments, nullptr, false);
    return parsed.is_object() ? parsed : nlohmann::json::object();
}

}  // namespace caretz
