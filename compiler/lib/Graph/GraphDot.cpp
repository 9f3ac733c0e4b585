//===- GraphDot.cpp - the model graph as Graphviz DOT ---------------------===//
#include "txc/Graph/GraphDot.h"
#include "txc/Transforms/FusedLocation.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <memory>

using namespace mlir;

namespace {

/// A DOT string body: quotes and backslashes escaped, lines joined by "\n"
/// (DOT's centred line break).
std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// The `as` scope of an op: the NameLoc the frontend wrapped its location
/// in ("encoder/layers.3/self_attn"), looking at the primary location of a
/// fused one; "" at the entry's top level.
std::string scopeOf(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    return fused.getLocations().empty() ? ""
                                        : scopeOf(fused.getLocations()[0]);
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "";
}

/// "model.tx:25" of the op's primary location, or "".
std::string lineOf(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
            llvm::Twine(file.getLine()))
        .str();
  return "";
}

/// "f32[B, T, 512]" without the default element type.
std::string typeText(Type type) {
  std::string text = tx::formatType(type);
  if (llvm::StringRef(text).starts_with("f32["))
    return text.substr(3);
  return text;
}

/// A short rendering of an attribute value for a node label.
std::string attrText(Attribute attr) {
  if (isa<UnitAttr>(attr))
    return "";
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << llvm::format("%g", f.getValueAsDouble());
    return s;
  }
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return std::to_string(i.getValue().getSExtValue());
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  llvm::StringRef text(s);
  // #tx.activation<gelu_tanh> -> gelu_tanh; array<i64: 1, 0> -> [1, 0].
  if (text.starts_with("#") && text.ends_with(">") && text.contains('<'))
    s = text.drop_until([](char c) { return c == '<'; })
            .drop_front()
            .drop_back()
            .str();
  else if (text.starts_with("array<") && text.contains(": "))
    s = "[" + text.split(": ").second.drop_back().str() + "]";
  if (s.size() > 32)
    s = s.substr(0, 29) + "...";
  return s;
}

/// The clusters a dotted path nests in, a numeric component staying with
/// the name before it: "encoder.layers.3.self_attn" -> "encoder",
/// "encoder.layers.3", "encoder.layers.3.self_attn".
std::vector<std::string> scopeChain(llvm::StringRef scope) {
  std::vector<std::string> chain;
  llvm::SmallVector<llvm::StringRef> parts;
  scope.split(parts, '.', -1, /*KeepEmpty=*/false);
  std::string path;
  for (size_t i = 0; i < parts.size(); ++i) {
    path += (path.empty() ? "" : ".") + parts[i].str();
    bool nextIsIndex =
        i + 1 < parts.size() &&
        llvm::all_of(parts[i + 1], [](char c) { return llvm::isDigit(c); });
    if (!nextIsIndex)
      chain.push_back(path);
  }
  return chain;
}

/// "h.0.ln_1.weight" -> "h.0": the parameter's owner without the op's own
/// `as` name.
std::string ownerOf(llvm::StringRef param) {
  llvm::StringRef owner = param.rsplit('.').first;
  if (owner == param)
    return "";
  llvm::StringRef parent = owner.rsplit('.').first;
  if (parent == owner)
    return "";
  // "layers.3.w" -> "layers.3", not "layers".
  return parent.str();
}

/// The dotted scope an op is drawn in: where the parameters it reads live
/// (a builtin's `as` path: `layer_norm(x) as h[i].ln_1` is in "h.0"), else
/// the `as` path of the defs it was inlined from.
std::string clusterPathOf(Operation &op) {
  for (Value operand : op.getOperands())
    if (auto param = operand.getDefiningOp<tx::ParamOp>())
      return ownerOf(param.getName());
  std::string scope = scopeOf(op.getLoc());
  std::replace(scope.begin(), scope.end(), '/', '.');
  return scope;
}

/// A tree of clusters; each holds the DOT lines of its nodes.
struct Cluster {
  std::string path;
  std::vector<std::string> nodes;
  std::map<std::string, std::unique_ptr<Cluster>> children;
  std::vector<std::string> order; // children in first-seen order

  Cluster &child(const std::string &childPath) {
    auto &slot = children[childPath];
    if (!slot) {
      slot = std::make_unique<Cluster>();
      slot->path = childPath;
      order.push_back(childPath);
    }
    return *slot;
  }

  void print(llvm::raw_ostream &os, int depth, int &counter) const {
    std::string indent(size_t(2 * depth), ' ');
    for (const std::string &node : nodes)
      os << indent << node << "\n";
    for (const std::string &name : order) {
      const Cluster &c = *children.at(name);
      os << indent << "subgraph cluster_" << counter++ << " {\n"
         << indent << "  label=\"" << escape(c.path) << "\";\n"
         << indent << "  style=\"rounded\"; color=\"#9aa5b1\"; "
         << "fontcolor=\"#52606d\";\n";
      c.print(os, depth + 1, counter);
      os << indent << "}\n";
    }
  }
};

bool isHeavy(Operation *op) {
  return isa<tx::LinearOp, tx::MatmulOp, tx::AttentionOp>(op);
}

/// Whether an op is drawn: parameters and constants are folded into their
/// users' labels; the return becomes the output nodes.
bool isDrawn(Operation *op) {
  if (isa<tx::ParamOp, func::ReturnOp>(op))
    return false;
  if (op->getNumOperands() == 0 && op->hasTrait<OpTrait::ConstantLike>())
    return false;
  return true;
}

class EntryGraph {
public:
  EntryGraph(func::FuncOp func, llvm::raw_ostream &os) : func(func), os(os) {}

  void write(func::FuncOp differentiated) {
    os << "digraph \"" << escape(func.getSymName()) << "\" {\n"
       << "  label=\"entry " << escape(func.getSymName()) << "\"; "
       << "labelloc=t; fontname=\"Helvetica\"; fontsize=14;\n"
       << "  rankdir=TB; nodesep=0.25; ranksep=0.35;\n"
       // Graphviz's default ranking aborts ("trouble in init_rank") on the
       // clusters of a differentiated seq2seq entry; newrank does not.
       << "  newrank=true;\n"
       << "  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
          "fontname=\"Helvetica\", fontsize=10];\n"
       << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#52606d\"];\n";
    Cluster root;
    for (BlockArgument arg : func.getArguments())
      addInput(root, arg);
    for (Operation &op : func.getBody().front())
      if (isDrawn(&op))
        addOp(root, op);
    addOutputs(root);
    if (differentiated)
      addFolded(root, differentiated);
    int counter = 0;
    root.print(os, 1, counter);
    for (const std::string &edge : edges)
      os << "  " << edge << "\n";
    os << "}\n";
  }

private:
  func::FuncOp func;
  llvm::raw_ostream &os;
  llvm::DenseMap<Value, std::string> nodeOf;
  std::vector<std::string> edges;
  int nextId = 0;
  std::string lossNode;

  std::string newId() { return "n" + std::to_string(nextId++); }

  /// Values read by more than kMaxFanOut drawn ops get proxies.
  static constexpr unsigned kMaxFanOut = 4;
  bool isShared(Value value) const {
    unsigned users = 0;
    for (Operation *user : value.getUsers())
      users += isDrawn(user) ? 1 : 0;
    return users > kMaxFanOut;
  }

  /// An entry argument's name, or the op that made the value.
  std::string nameOf(Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      if (auto attr = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        "tx.name"))
        return attr.getValue().str();
    if (Operation *def = value.getDefiningOp()) {
      std::string path = clusterPathOf(*def);
      return (path.empty() ? "" : path + " ") +
             def->getName().stripDialect().str();
    }
    return "value";
  }

  Cluster &clusterFor(Cluster &root, Operation &op) {
    Cluster *c = &root;
    for (const std::string &path : scopeChain(clusterPathOf(op)))
      c = &c->child(path);
    return *c;
  }

  void addInput(Cluster &root, BlockArgument arg) {
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    if (auto attr = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "tx.name"))
      name = attr.getValue().str();
    std::string label = name + "\n" + typeText(arg.getType());
    if (auto role = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "tx.role"))
      label += "\n@" + role.getValue().str();
    std::string id = newId();
    root.nodes.push_back(id + " [shape=ellipse, fillcolor=\"#e4e7eb\", "
                              "label=\"" +
                         escape(label) + "\"];");
    nodeOf[arg] = id;
  }

  void addOp(Cluster &root, Operation &op) {
    std::string id = newId();
    std::string label = op.getName().stripDialect().str();
    // Attributes that say what the op does (not its plumbing).
    std::vector<std::string> attrs;
    for (NamedAttribute attr : op.getAttrs()) {
      llvm::StringRef name = attr.getName().getValue();
      if (name == "operandSegmentSizes" || name.starts_with("tx."))
        continue;
      std::string value = attrText(attr.getValue());
      if ((name == "dropout" && value == "0") || value == "none")
        continue;
      attrs.push_back(value.empty() ? name.str() : name.str() + " " + value);
    }
    if (!attrs.empty())
      label += "\n" + llvm::join(attrs, ", ");
    // Parameters read, relative to the op's cluster.
    std::string scopePath = clusterPathOf(op);
    if (!scopePath.empty())
      scopePath += ".";
    for (Value operand : op.getOperands()) {
      auto param = operand.getDefiningOp<tx::ParamOp>();
      if (!param)
        continue;
      llvm::StringRef name = param.getName();
      if (!scopePath.empty() && name.starts_with(scopePath))
        name = name.drop_front(scopePath.size());
      label += "\n" + name.str() + " " + typeText(param.getType());
    }
    std::vector<std::string> fused = tx::fusedFrom(op.getLoc());
    if (!fused.empty())
      label += "\nfused: " + llvm::join(fused, ", ");
    std::string line = lineOf(op.getLoc());
    if (!line.empty())
      label += "\n" + line;
    std::string style;
    if (!fused.empty())
      style = ", fillcolor=\"#ffe08a\", color=\"#b7791f\", penwidth=1.5";
    else if (isHeavy(&op))
      style = ", fillcolor=\"#dbeafe\"";
    clusterFor(root, op).nodes.push_back(id + " [label=\"" + escape(label) +
                                         "\"" + style + "];");
    Cluster &cluster = clusterFor(root, op);
    for (Value operand : op.getOperands()) {
      auto it = nodeOf.find(operand);
      if (it == nodeOf.end())
        continue;
      if (isShared(operand)) {
        // A value many ops read (a mask, the source ids): a small copy of
        // its name beside each reader instead of edges across the picture.
        std::string proxy = newId();
        cluster.nodes.push_back(
            proxy + " [shape=plain, style=\"\", fontcolor=\"#52606d\", "
                    "label=\"" +
            escape(nameOf(operand) + " " + typeText(operand.getType())) +
            "\"];");
        edges.push_back(proxy + " -> " + id + " [style=dashed];");
        continue;
      }
      edges.push_back(it->second + " -> " + id + " [label=\"" +
                      escape(typeText(operand.getType())) + "\"];");
    }
    for (Value result : op.getResults())
      nodeOf[result] = id;
  }

  void addOutputs(Cluster &root) {
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      std::string name = "result" + std::to_string(i);
      if (auto attr = func.getResultAttrOfType<StringAttr>(i, "tx.name"))
        name = attr.getValue().str();
      std::string id = newId();
      root.nodes.push_back(id + " [shape=ellipse, fillcolor=\"#e4e7eb\", "
                                "label=\"" +
                           escape(name + "\n" + typeText(value.getType())) +
                           "\"];");
      auto it = nodeOf.find(value);
      if (it != nodeOf.end())
        edges.push_back(it->second + " -> " + id + " [label=\"" +
                        escape(typeText(value.getType())) + "\"];");
      if (i == 0)
        lossNode = id;
    }
  }

  /// One node standing for what autodiff and the optimizer added.
  void addFolded(Cluster &root, func::FuncOp differentiated) {
    int64_t forwardOps = 0, allOps = 0, updates = 0;
    func.walk([&](Operation *op) { forwardOps += isDrawn(op) ? 1 : 0; });
    differentiated.walk([&](Operation *op) {
      if (!isDrawn(op))
        return;
      ++allOps;
      if (op->getName().stripDialect().starts_with("adam"))
        ++updates;
    });
    if (allOps <= forwardOps)
      return;
    std::string id = newId();
    std::string label = "backward and optimizer\n" +
                        std::to_string(allOps - forwardOps - updates) +
                        " gradient ops, " + std::to_string(updates) +
                        " Adam updates\n(--graph-detail=full draws them)";
    root.nodes.push_back(id + " [shape=note, fillcolor=\"#f5f7fa\", "
                              "label=\"" +
                         escape(label) + "\"];");
    if (!lossNode.empty())
      edges.push_back(lossNode + " -> " + id + " [style=dashed];");
  }
};

func::FuncOp findEntry(ModuleOp module, llvm::StringRef name) {
  if (!module)
    return nullptr;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.getSymName() == name && func->hasAttr("tx.entry"))
      return func;
  return nullptr;
}

} // namespace

std::vector<std::string> txc::selectEntries(ModuleOp module,
                                            const GraphOptions &options,
                                            std::string &unknown) {
  std::vector<std::string> all;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("tx.entry"))
      all.push_back(func.getSymName().str());
  if (options.entries.empty())
    return all;
  std::vector<std::string> picked;
  for (const std::string &name : all)
    if (llvm::is_contained(options.entries, name))
      picked.push_back(name);
  for (const std::string &name : options.entries)
    if (!llvm::is_contained(all, name)) {
      unknown = name;
      break;
    }
  return picked;
}

void txc::writeEntryDot(ModuleOp forward, ModuleOp differentiated,
                        llvm::StringRef entry, const GraphOptions &options,
                        llvm::raw_ostream &os) {
  if (options.full && differentiated) {
    EntryGraph(findEntry(differentiated, entry), os).write(nullptr);
    return;
  }
  EntryGraph(findEntry(forward, entry), os)
      .write(findEntry(differentiated, entry));
}
