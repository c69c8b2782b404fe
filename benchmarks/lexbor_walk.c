/* A measurement, not part of readerproxy: how long a C walk of selectolax's Lexbor tree takes, against
 * the serialise-and-scan path of the Document build (`tree.html`, then `_native.scan`), now the fallback
 * of `_native.walk`. Built and run by benchmarks/lexbor_walk.py; it measured the floor that made
 * `_native.walk` worth writing.
 *
 * The walk calls Lexbor's exported functions (found with dlsym in selectolax's own module, already
 * loaded): every node in document order, each element's local name and attributes (a str made for
 * each class value, as the scan makes one), each text node's data decoded to a str (as the scan
 * makes one per line). It does not build the linear view: no line splitting, no tag lengths, no
 * token arrays. So it is the floor of what a walk-based Document build would cost, not its price.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>

typedef void node_t;
static node_t *(*first_child)(node_t *);
static node_t *(*next_)(node_t *);
static node_t *(*parent_)(node_t *);
static int (*type_)(node_t *);
static const unsigned char *(*local_name)(node_t *, size_t *);
static void *(*first_attr)(node_t *);
static void *(*next_attr)(void *);
static const unsigned char *(*attr_name)(void *, size_t *);
static const unsigned char *(*attr_value)(void *, size_t *);
static unsigned char *(*text_content)(node_t *, size_t *);

static PyObject *setup(PyObject *m, PyObject *arg) {
    const char *path = PyUnicode_AsUTF8(arg);
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h) { PyErr_SetString(PyExc_OSError, dlerror()); return NULL; }
#define SYM(v, n) if (!(*(void **)&v = dlsym(h, n))) { PyErr_SetString(PyExc_OSError, n); return NULL; }
    SYM(first_child, "lxb_dom_node_first_child_noi")
    SYM(next_, "lxb_dom_node_next_noi")
    SYM(parent_, "lxb_dom_node_parent_noi")
    SYM(type_, "lxb_dom_node_type_noi")
    SYM(local_name, "lxb_dom_element_local_name")
    SYM(first_attr, "lxb_dom_element_first_attribute_noi")
    SYM(next_attr, "lxb_dom_element_next_attribute_noi")
    SYM(attr_name, "lxb_dom_attr_local_name_noi")
    SYM(attr_value, "lxb_dom_attr_value_noi")
    SYM(text_content, "lxb_dom_node_text_content")
    Py_RETURN_NONE;
}

/* walk(root_mem_id) -> (elements, texts, list of text str, attribute strs made) */
static PyObject *walk(PyObject *m, PyObject *arg) {
    node_t *root = (node_t *)PyLong_AsVoidPtr(arg);
    if (!root && PyErr_Occurred()) return NULL;
    PyObject *texts = PyList_New(0);
    Py_ssize_t elements = 0, attrs = 0, chars = 0;
    node_t *node = root;
    while (node) {
        int t = type_(node);
        if (t == 1) {
            elements++;
            size_t len; const unsigned char *name = local_name(node, &len); chars += (Py_ssize_t)len;
            for (void *a = first_attr(node); a; a = next_attr(a)) {
                size_t nl, vl; const unsigned char *n = attr_name(a, &nl); const unsigned char *v = attr_value(a, &vl);
                if (nl == 5 && memcmp(n, "class", 5) == 0 && v) {
                    PyObject *s = PyUnicode_DecodeUTF8((const char *)v, (Py_ssize_t)vl, "surrogatepass");
                    Py_XDECREF(s); attrs++;
                }
            }
        } else if (t == 3) {
            size_t len; unsigned char *data = text_content(node, &len);
            if (data) {
                PyObject *s = PyUnicode_DecodeUTF8((const char *)data, (Py_ssize_t)len, "surrogatepass");
                if (s) { PyList_Append(texts, s); Py_DECREF(s); }
            }
        }
        node_t *c = first_child(node);
        if (c) { node = c; continue; }
        while (node && node != root && !next_(node)) node = parent_(node);
        if (!node || node == root) break;
        node = next_(node);
    }
    return Py_BuildValue("(nnNn)", elements, attrs, texts, chars);
}

static PyMethodDef methods[] = {{"setup", setup, METH_O, ""}, {"walk", walk, METH_O, ""}, {NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "lexbor_walk", NULL, -1, methods};
PyMODINIT_FUNC PyInit_lexbor_walk(void) { return PyModule_Create(&mod); }
