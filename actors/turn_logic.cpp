#include "actors/turn_logic.hpp"

#include "protocol/base/ids.hpp"

namespace llmx {

ResponseItem TurnLogic::user_input(const std::vector<UserInput>& input, std::vector<EventMsg>& out) {
  UserMessageTurnItem item{new_uuid_v4(), input};
  out.push_back(ItemStartedEvent{thread_id_, turn_id_, item});
  out.push_back(ItemCompletedEvent{thread_id_, turn_id_, item});
  UserMessageEvent um{user_inputs_text(input), {}};
  for (const auto& i : input)
    if (auto img = i.get_if<ImageInput>()) um.images.push_back(img->image_url);
  out.push_back(std::move(um));
  return user_inputs_to_message(input);
}

void TurnLogic::reset_response() {
  agent_item_id_.reset();
  reasoning_item_id_.reset();
  items_.clear();
  calls_.clear();
  completed_.reset();
}

void TurnLogic::on_model_events(std::vector<ModelEvent>& events, std::vector<EventMsg>& out,
                                std::optional<int64_t> context_window) {
  for (auto& ev : events) {
    if (auto* rl = ev.get_if<RateLimits>()) {
      rate_limits_ = std::move(rl->snapshot);
      out.push_back(token_count(context_window));
      continue;
    }
    if (auto* t = ev.get_if<TextDelta>()) {
      if (!agent_item_id_) {
        agent_item_id_ = new_uuid_v4();
        out.push_back(ItemStartedEvent{thread_id_, turn_id_, AgentMessageTurnItem{*agent_item_id_, {}}});
      }
      out.push_back(AgentMessageContentDeltaEvent{thread_id_, turn_id_, *agent_item_id_, t->text});
      out.push_back(AgentMessageDeltaEvent{std::move(t->text)});
    } else if (auto* r = ev.get_if<ReasoningDelta>()) {
      if (!reasoning_item_id_) {
        reasoning_item_id_ = new_uuid_v4();
        out.push_back(ItemStartedEvent{thread_id_, turn_id_, ReasoningTurnItem{*reasoning_item_id_, {}, {}}});
      }
      out.push_back(ReasoningContentDeltaEvent{thread_id_, turn_id_, *reasoning_item_id_, r->text});
      out.push_back(AgentReasoningDeltaEvent{std::move(r->text)});
    } else if (auto* d = ev.get_if<ItemDone>()) {
      if (auto* m = d->item.get_if<MessageItem>()) {
        auto text = m->text();
        if (!agent_item_id_) {
          agent_item_id_ = new_uuid_v4();
          out.push_back(ItemStartedEvent{thread_id_, turn_id_, AgentMessageTurnItem{*agent_item_id_, {}}});
        }
        out.push_back(ItemCompletedEvent{thread_id_, turn_id_,
                                         AgentMessageTurnItem{*agent_item_id_, {AgentText{text}}}});
        out.push_back(AgentMessageEvent{text});
        last_agent_message_ = text;
      } else if (auto* rs = d->item.get_if<ReasoningItem>()) {
        auto text = rs->content_text();
        std::vector<std::string> summary;
        for (const auto& s : rs->summary)
          if (auto t = s.get_if<SummaryText>()) summary.push_back(t->text);
        if (text.empty())  // Responses sends reasoning as summaries
          for (const auto& t : summary) text += (text.empty() ? "" : "\n\n") + t;
        if (!reasoning_item_id_) {
          reasoning_item_id_ = new_uuid_v4();
          out.push_back(ItemStartedEvent{thread_id_, turn_id_, ReasoningTurnItem{*reasoning_item_id_, {}, {}}});
        }
        out.push_back(ItemCompletedEvent{thread_id_, turn_id_,
                                         ReasoningTurnItem{*reasoning_item_id_, summary.empty() ? std::vector{text} : summary, {}}});
        out.push_back(AgentReasoningEvent{text});
      } else if (auto* c = d->item.get_if<FunctionCallItem>()) {
        calls_.push_back(*c);
      }
      items_.push_back(std::move(d->item));
    } else if (auto* c = ev.get_if<Completed>()) {
      if (c->usage) {
        if (!usage_) usage_ = TokenUsageInfo{};
        usage_->total_token_usage += *c->usage;
        usage_->last_token_usage = *c->usage;
      }
      completed_ = std::move(*c);
    }
  }
}

std::vector<ResponseItem> TurnLogic::take_items() {
  auto out = std::move(items_);
  items_.clear();
  agent_item_id_.reset();
  reasoning_item_id_.reset();
  return out;
}

std::vector<FunctionCallItem> TurnLogic::take_calls() {
  auto out = std::move(calls_);
  calls_.clear();
  completed_.reset();
  return out;
}

TokenCountEvent TurnLogic::token_count(std::optional<int64_t> context_window) const {
  TokenCountEvent ev;
  if (usage_) {
    ev.info = *usage_;
    ev.info->model_context_window = context_window;
  }
  if (rate_limits_) ev.rate_limits = *rate_limits_;
  return ev;
}

}  // namespace llmx
