#include "tensor/copy.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <random>

#include "support/errors.h"

namespace nt {

HierarchyCopier::HierarchyCopier(SymbolMap replacements) : replacements_(std::move(replacements)) {}

TensorPtr HierarchyCopier::copy(const Tensor& level) {
  auto it = tensors_.find(&level);
  if (it != tensors_.end()) return it->second.second;
  auto original = std::const_pointer_cast<Tensor>(level.shared_from_this());
  auto result = std::shared_ptr<Tensor>(new Tensor());
  // Registered before the levels it reaches are copied: they may reach it.
  tensors_.emplace(&level, std::make_pair(original, result));
  new_copies_.emplace_back(original, result);
  result->name_ = level.name_;
  for (const auto& size : level.shape_) result->shape_.push_back(substitute(size, replacements_));
  result->indices_ = level.indices_;
  if (auto* next = std::get_if<TensorPtr>(&level.dtype_)) {
    result->dtype_ = copy(**next);
  } else {
    result->dtype_ = level.dtype_;
  }
  if (level.source_) result->source_ = copy(*level.source_);
  result->other_ = level.other_;
  result->jagged_dim_ = level.jagged_dim_;
  result->constexpr_ = level.constexpr_;
  result->value_ = level.value_;
  result->index_map_ = replacements_.empty() ? level.index_map_ : copy_node(level.index_map_);
  result->covers_base_ = level.covers_base_;
  return result;
}

IndexMapRef HierarchyCopier::copy_node(const IndexMapRef& node) {
  if (!node) return nullptr;
  auto it = nodes_.find(node.get());
  if (it != nodes_.end()) return it->second.second;
  std::vector<IndexBinding> bindings;
  for (const auto& binding : node->bindings) {
    bindings.push_back({binding.index, substitute(binding.value, replacements_),
                        substitute(binding.size, replacements_), binding.checked});
  }
  std::vector<IndexMapRef> inputs;
  for (const auto& input : node->inputs) inputs.push_back(copy_node(input));
  IndexMapRef result = make_index_map_node(std::move(bindings), std::move(inputs));
  nodes_.emplace(node.get(), std::make_pair(node, result));
  return result;
}

std::vector<std::pair<TensorPtr, TensorPtr>> HierarchyCopier::take_new_copies() {
  return std::exchange(new_copies_, {});
}

TensorPtr Tensor::substituted(const SymbolMap& replacements) const {
  return HierarchyCopier(replacements).copy(*this);
}

TensorFields Tensor::fields() const {
  return {name_,       shape_,     indices_, dtype_,     source_,     other_,
          jagged_dim_, constexpr_, value_,   index_map_, covers_base_};
}

TensorPtr Tensor::blank() { return std::shared_ptr<Tensor>(new Tensor()); }

void Tensor::restore(TensorFields fields) {
  if (fields.indices.size() != fields.shape.size()) {
    throw ValueError("a pickled Tensor has " + std::to_string(fields.shape.size()) + " sizes but " +
                     std::to_string(fields.indices.size()) + " index variables");
  }
  if (auto* level = std::get_if<TensorPtr>(&fields.dtype); level && level->get() == this) {
    throw ValueError("a pickled Tensor is its own dtype");
  }
  name_ = std::move(fields.name);
  shape_ = std::move(fields.shape);
  indices_ = std::move(fields.indices);
  dtype_ = std::move(fields.dtype);
  source_ = std::move(fields.source);
  other_ = std::move(fields.other);
  jagged_dim_ = fields.jagged_dim;
  constexpr_ = fields.constexpr_;
  covers_base_ = fields.covers_base;
  value_ = std::move(fields.value);
  index_map_ = std::move(fields.index_map);
}

namespace {

std::mutex g_origin_mutex;

}  // namespace

std::string index_origin() {
  static pid_t pid = 0;
  static std::string origin;
  std::lock_guard<std::mutex> lock(g_origin_mutex);
  pid_t now = getpid();
  if (now != pid) {
    pid = now;
    std::random_device random;
    char text[64];
    std::snprintf(text, sizeof text, "%ld-%08x%08x", static_cast<long>(now), random(), random());
    origin = text;
  }
  return origin;
}

Expr imported_index_var(const std::string& origin, const std::string& name) {
  if (origin == index_origin()) return var(name);
  static std::mutex mutex;
  static std::unordered_map<std::string, Expr> imported;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = imported.emplace(origin + "/" + name, Expr());
  if (inserted) it->second = fresh_index_var();
  return it->second;
}

}  // namespace nt
