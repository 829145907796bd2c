// Config, Model and Tokenizer: the golden float model from Python. Field and method names are the
// C++ ones; logits come back as float32 numpy arrays; loading and the forward passes release the GIL.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/error.hpp"

namespace kvcim::python {

using namespace kvcim::cmodel;

namespace {

py::dict config_dict(const Config& c) {
  py::dict d;
  d["dim"] = c.dim;
  d["hidden_dim"] = c.hidden_dim;
  d["n_layers"] = c.n_layers;
  d["n_heads"] = c.n_heads;
  d["n_kv_heads"] = c.n_kv_heads;
  d["vocab_size"] = c.vocab_size;
  d["seq_len"] = c.seq_len;
  d["shared_classifier"] = c.shared_classifier;
  d["rope_theta"] = c.rope_theta;
  d["rms_norm_eps"] = c.rms_norm_eps;
  d["architecture"] = architecture_name(c.architecture);
  d["head_dim"] = c.head_dim();
  d["qkv_bias"] = c.qkv_bias;
  d["o_bias"] = c.o_bias;
  d["qk_norm"] = c.qk_norm;
  d["sliding_window"] = c.sliding_window;
  if (c.rope_scaling.enabled()) {
    py::dict r;
    r["rope_type"] = "llama3";
    r["factor"] = c.rope_scaling.factor;
    r["low_freq_factor"] = c.rope_scaling.low_freq_factor;
    r["high_freq_factor"] = c.rope_scaling.high_freq_factor;
    r["original_max_position_embeddings"] = c.rope_scaling.original_max_position_embeddings;
    d["rope_scaling"] = r;
  } else {
    d["rope_scaling"] = py::none();
  }
  return d;
}

Architecture architecture_from(const py::handle& value) {
  const std::string text = py::str(value);
  for (Architecture a : {Architecture::llama, Architecture::mistral, Architecture::qwen2, Architecture::qwen3})
    if (text == architecture_name(a)) return a;
  fail("Config.from_dict", "architecture", "'" + text + "'",
       "expected LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM or Qwen3ForCausalLM");
}

// rope_scaling: None, or {"rope_type": "llama3", factor, low_freq_factor, high_freq_factor,
// original_max_position_embeddings} as to_dict writes it.
RopeScaling rope_scaling_from(const py::handle& value) {
  RopeScaling r;
  if (value.is_none()) return r;
  if (!py::isinstance<py::dict>(value))
    fail("Config.from_dict", "rope_scaling", py::str(py::repr(value)), "expected None or a dict");
  const py::dict d = py::reinterpret_borrow<py::dict>(value);
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
    if (!d.contains(key))
      fail("Config.from_dict", std::string("rope_scaling.") + key, "missing", "a llama3 rope_scaling states it");
  r.factor = d["factor"].cast<double>();
  r.low_freq_factor = d["low_freq_factor"].cast<double>();
  r.high_freq_factor = d["high_freq_factor"].cast<double>();
  r.original_max_position_embeddings = d["original_max_position_embeddings"].cast<int>();
  return r;
}

// Unknown keys are errors: a misspelt field must not silently keep its default.
Config config_from_dict(const py::dict& d) {
  Config c;
  int head_dim = 0;
  for (auto item : d) {
    const std::string key = py::str(item.first);
    auto get_int = [&](int& field) {
      if (!py::isinstance<py::int_>(item.second) || py::isinstance<py::bool_>(item.second))
        fail("Config.from_dict", key, py::str(py::repr(item.second)), "expected an integer");
      field = item.second.cast<int>();
    };
    if (key == "dim") get_int(c.dim);
    else if (key == "hidden_dim") get_int(c.hidden_dim);
    else if (key == "n_layers") get_int(c.n_layers);
    else if (key == "n_heads") get_int(c.n_heads);
    else if (key == "n_kv_heads") get_int(c.n_kv_heads);
    else if (key == "vocab_size") get_int(c.vocab_size);
    else if (key == "seq_len") get_int(c.seq_len);
    else if (key == "shared_classifier") c.shared_classifier = item.second.cast<bool>();
    else if (key == "rope_theta") c.rope_theta = item.second.cast<float>();
    else if (key == "rms_norm_eps") c.rms_norm_eps = item.second.cast<float>();
    else if (key == "architecture") c.architecture = architecture_from(item.second);
    else if (key == "head_dim") get_int(head_dim);
    else if (key == "qkv_bias") c.qkv_bias = item.second.cast<bool>();
    else if (key == "o_bias") c.o_bias = item.second.cast<bool>();
    else if (key == "qk_norm") c.qk_norm = item.second.cast<bool>();
    else if (key == "sliding_window") get_int(c.sliding_window);
    else if (key == "rope_scaling") c.rope_scaling = rope_scaling_from(item.second);
    else
      fail("Config.from_dict", key, py::str(py::repr(item.second)),
           "unknown field (expected dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, "
           "seq_len, shared_classifier, rope_theta, rms_norm_eps, architecture, head_dim, qkv_bias, "
           "o_bias, qk_norm, sliding_window, rope_scaling)");
  }
  // head_dim is kept apart only where it is not dim / n_heads
  if (head_dim != 0 && (c.n_heads <= 0 || head_dim * c.n_heads != c.dim)) c.head_size = head_dim;
  c.validate("Config.from_dict");
  return c;
}

// Bytes of a piece exactly as stored (pieces may hold partial UTF-8 sequences).
py::bytes as_bytes(const std::string& s) { return py::bytes(s); }

// id, refused naming `where` unless it is in the tokenizer's vocabulary.
int vocab_id(const Tokenizer& t, int id, const char* where) {
  if (id < 0 || id >= t.vocab_size())
    fail(where, "id", std::to_string(id), "outside the vocabulary of " + std::to_string(t.vocab_size()));
  return id;
}

// Decoded text as str: lone bytes that are not UTF-8 become U+FFFD rather than an exception.
py::str as_text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

}  // namespace

void bind_model(py::module_& m) {
  m.def("default_model_path", &default_model_path,
        "Path of the embedded model (stories260K, MIT).");
  m.def("default_tokenizer_path", &default_tokenizer_path,
        "Path of the embedded tokenizer (tok512).");

  py::class_<Config>(m, "Config", "Shape of a Llama-family decoder (kvcim::cmodel::Config).")
      .def(py::init<>())
      .def_static("from_dict", &config_from_dict, py::arg("d"))
      .def_readwrite("dim", &Config::dim)
      .def_readwrite("hidden_dim", &Config::hidden_dim)
      .def_readwrite("n_layers", &Config::n_layers)
      .def_readwrite("n_heads", &Config::n_heads)
      .def_readwrite("n_kv_heads", &Config::n_kv_heads)
      .def_readwrite("vocab_size", &Config::vocab_size)
      .def_readwrite("seq_len", &Config::seq_len)
      .def_readwrite("shared_classifier", &Config::shared_classifier)
      .def_readwrite("rope_theta", &Config::rope_theta)
      .def_readwrite("rms_norm_eps", &Config::rms_norm_eps)
      .def_property_readonly("architecture", [](const Config& c) { return std::string(architecture_name(c.architecture)); },
                             "The Hugging Face family: LlamaForCausalLM (llama2.c checkpoints too), "
                             "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM.")
      .def_readwrite("sliding_window", &Config::sliding_window)
      .def("head_dim", &Config::head_dim)
      .def("q_dim", &Config::q_dim)
      .def("kv_dim", &Config::kv_dim)
      .def("kv_group", &Config::kv_group)
      .def("validate", &Config::validate, py::arg("where") = "Config")
      .def("checkpoint_floats", &Config::checkpoint_floats)
      .def("parameter_count", &Config::parameter_count)
      .def("to_dict", &config_dict)
      .def("__eq__", [](const Config& a, const Config& b) {
        return config_dict(a).equal(config_dict(b));
      })
      .def("__repr__", [](const Config& c) {
        return "Config(" + std::string(py::str(config_dict(c))) + ")";
      })
      .def(py::pickle([](const Config& c) { return config_dict(c); },
                      [](const py::dict& d) { return config_from_dict(d); }));

  m.def("read_checkpoint_config", &load_checkpoint_config, py::arg("path"),
        py::call_guard<py::gil_scoped_release>(),
        "The Config of a llama2.c checkpoint (its header only) or a Hugging Face folder (config.json).");

  py::class_<PyModel, std::shared_ptr<PyModel>>(
      m, "Model", "The float32 golden decoder of a llama2.c checkpoint (kvcim::cmodel::Model).")
      .def_static(
          "load",
          [](const std::optional<std::string>& path, const std::string& weights) {
            const WeightFormat format = parse_weight_format("weights", weights);
            std::shared_ptr<Model> model;
            {
              py::gil_scoped_release release;
              model = Model::load(path.value_or(default_model_path()), format);
            }
            auto out = std::make_shared<PyModel>();
            out->model = std::move(model);
            return out;
          },
          py::arg("path") = py::none(), py::arg("weights") = "float",
          "Loads a llama2.c checkpoint file or a Hugging Face folder (config.json + safetensors;\n"
          "default: the embedded model). weights: 'float' (the float32 reference) or 'int8'\n"
          "(8-bit per-channel weights and per-token activations, int32 accumulation; attention\n"
          "stays float).")
      .def_property_readonly("config", [](const PyModel& m) { return m.model->config(); })
      .def_property_readonly("weights",
                             [](const PyModel& m) { return std::string(name(m.model->weight_format())); })
      .def_property_readonly("path", [](const PyModel& m) { return m.model->path(); })
      .def(
          "logits",
          [](PyModel& m, const std::vector<int>& tokens) {
            Matrix logits;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> hold(*m.lock);
              logits = m.model->logits(tokens);
            }
            return numpy_matrix(logits.data(), logits.rows(), logits.cols());
          },
          py::arg("tokens"),
          "Teacher-forced logits: row i after feeding tokens[0..i]; float32 [n, vocab].")
      .def(
          "forward",
          [](PyModel& m, int token, int pos) {
            Vector logits;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> hold(*m.lock);
              logits = m.model->forward(token, pos);
            }
            return numpy_vector(logits.data(), logits.size());
          },
          py::arg("token"), py::arg("pos"),
          "Feeds `token` at `pos` (the next position; 0 starts a new sequence); float32 [vocab].")
      .def("__repr__", [](const PyModel& m) {
        return "Model(path='" + m.model->path() + "', dim=" +
               std::to_string(m.model->config().dim) +
               ", n_layers=" + std::to_string(m.model->config().n_layers) +
               (m.model->weight_format() == WeightFormat::int8 ? ", weights='int8'" : "") + ")";
      });

  py::class_<Tokenizer>(m, "Tokenizer",
                        "llama2.c's tokenizer or a Hugging Face tokenizer.json (kvcim::cmodel::Tokenizer).")
      .def_static(
          "load",
          [](const std::optional<std::string>& path, int vocab_size) {
            return Tokenizer::load(path.value_or(default_tokenizer_path()), vocab_size);
          },
          py::arg("path") = py::none(), py::arg("vocab_size") = -1,
          py::call_guard<py::gil_scoped_release>(),
          "Loads a tokenizer: llama2.c .bin, tokenizer.json or a Hugging Face folder\n"
          "(default: the embedded tok512).")
      .def("encode", &Tokenizer::encode, py::arg("text"), py::arg("bos") = true,
           py::arg("eos") = false, py::call_guard<py::gil_scoped_release>())
      .def(
          "decode",
          [](const Tokenizer& t, int prev, int token) { return as_bytes(t.decode(prev, token)); },
          py::arg("prev"), py::arg("token"),
          "The bytes printed when `token` follows `prev` (a piece may be a lone UTF-8 byte).")
      .def(
          "printable",
          [](const Tokenizer& t, int prev, int token) { return as_bytes(t.printable(prev, token)); },
          py::arg("prev"), py::arg("token"))
      .def(
          "decode_all", [](const Tokenizer& t, const std::vector<int>& ids) { return as_text(t.decode_all(ids)); },
          py::arg("ids"), "Text of a whole id sequence (as str; invalid UTF-8 replaced).")
      .def(
          "decode_text", [](const Tokenizer& t, const std::vector<int>& ids) { return as_text(t.decode_text(ids)); },
          py::arg("ids"),
          "Text of ids as Hugging Face's decode(skip_special_tokens=True): specials dropped, byte\n"
          "pieces joined into UTF-8, one leading space removed (invalid UTF-8 replaced).")
      .def_property_readonly("is_hf", &Tokenizer::is_hf)
      .def_property_readonly("bos_id", &Tokenizer::bos_id, "BOS id (-1: none, as Qwen's)")
      .def_property_readonly("eos_id", &Tokenizer::eos_id, "EOS id (-1: none)")
      .def_property_readonly("pad_id", &Tokenizer::pad_id, "pad id (-1: none)")
      .def_property_readonly("vocab_size", &Tokenizer::vocab_size)
      .def_property_readonly("path", &Tokenizer::path)
      .def(
          "piece", [](const Tokenizer& t, int id) { return as_bytes(t.piece(vocab_id(t, id, "Tokenizer.piece"))); },
          py::arg("id"))
      .def(
          "score", [](const Tokenizer& t, int id) { return t.score(vocab_id(t, id, "Tokenizer.score")); },
          py::arg("id"))
      .def("__repr__", [](const Tokenizer& t) {
        return "Tokenizer(path='" + t.path() + "', vocab_size=" + std::to_string(t.vocab_size()) +
               ")";
      });
  m.attr("BOS") = kBos;
  m.attr("EOS") = kEos;
}

}  // namespace kvcim::python
