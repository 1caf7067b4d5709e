"""subgraph_models.py DIR: models with work inside If branches and Loop bodies, and their batches
(QA round 9a, defects 2 and 4), written with if_model.py's writers:
  softmax12.onnx   opset 12; z = If(cond, Softmax(x, axis=2), Softmax(x, axis=1)), x [2, 3, 4]: the
                   then-branch's is over the last axis (the same at 13), the else-branch's flattens
                   x to 2-D before 13 (another function at 13); cond_true.npz, cond_false.npz
  loop_att.onnx    a Loop body whose state goes through an attention chain twice (its scale `c` an
                   initializer outside the body); loop_in.npz
  elu_if.onnx      opset 18; top = Elu(x); z = If(cond, then: If(cond, Elu(x), x) + Elu(x), else:
                   Elu(x)): Elus at the top, in both branches and in a nested If; elu_true.npz,
                   elu_false.npz
  att23.onnx       opset 23; y = If(cond, Attention(q, k, v), v)
  unnamed.onnx     opset 12, no node named, an If nested in a branch"""
import os
import sys

import numpy as np

from if_model import B, D, H, L, attr, graph, ld, model, node, tensor, valinfo

out = sys.argv[1]
F32, BOOL, I64 = 1, 9, 7
X = [2, 3, 4]


def save(name, top, opset):
    open(os.path.join(out, name), "wb").write(model(top, opset, b"subgraph_models"))


x = np.random.default_rng(3).standard_normal(X).astype(np.float32)
for cond in (True, False):
    np.savez(os.path.join(out, "cond_%s.npz" % str(cond).lower()), x=x, cond=np.array(cond))
then = graph([node("Softmax", ["x"], ["z_t"], axis=2)], [], [valinfo("z_t", F32, X)], name="then")
other = graph([node("Softmax", ["x"], ["z_e"], axis=1)], [], [valinfo("z_e", F32, X)], name="else")
save("softmax12.onnx", graph([node("If", ["cond"], ["z"], then_branch=then, else_branch=other)],
                             [valinfo("x", F32, X), valinfo("cond", BOOL, [])], [valinfo("z", F32, X)]), 12)

S = [B, H, L, D]
body = graph([node("Transpose", ["s_in"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["s_in", "kt"], ["s"]),
              node("Mul", ["s", "c"], ["ss"]), node("Softmax", ["ss"], ["p"], axis=-1),
              node("MatMul", ["p", "s_in"], ["s_out"]), node("Identity", ["go_in"], ["go_out"])],
             [valinfo("i", I64, []), valinfo("go_in", BOOL, []), valinfo("s_in", F32, S)],
             [valinfo("go_out", BOOL, []), valinfo("s_out", F32, S)], name="body")
save("loop_att.onnx", graph([node("Loop", ["trip", "", "q"], ["y"], body=body)], [valinfo("q", F32, S)],
                            [valinfo("y", F32, S)], [tensor("c", np.array(0.3, np.float32)), tensor("trip", np.array(2, np.int64))]),
     18)
np.savez(os.path.join(out, "loop_in.npz"), q=np.random.default_rng(4).standard_normal(S).astype(np.float32))

E = [3, 4]
inner = graph([node("Elu", ["x"], ["n_t"])], [], [valinfo("n_t", F32, E)], name="inner_then")
inner_else = graph([node("Identity", ["x"], ["n_e"])], [], [valinfo("n_e", F32, E)], name="inner_else")
then = graph([node("If", ["cond"], ["n"], then_branch=inner, else_branch=inner_else), node("Elu", ["x"], ["u"]),
              node("Add", ["n", "u"], ["z_t"])], [], [valinfo("z_t", F32, E)], name="then")
other = graph([node("Elu", ["x"], ["z_e"])], [], [valinfo("z_e", F32, E)], name="else")
save("elu_if.onnx", graph([node("Elu", ["x"], ["top"]), node("If", ["cond"], ["z"], then_branch=then, else_branch=other)],
                          [valinfo("x", F32, E), valinfo("cond", BOOL, [])],
                          [valinfo("z", F32, E), valinfo("top", F32, E)]), 18)
x = np.random.default_rng(5).standard_normal(E).astype(np.float32)
for cond in (True, False):
    np.savez(os.path.join(out, "elu_%s.npz" % str(cond).lower()), x=x, cond=np.array(cond))

# att23.onnx: opset 23, y = If(cond, Attention(q, k, v), v): an Attention node inside a branch
then = graph([node("Attention", ["q", "k", "v"], ["y_t"])], [], [valinfo("y_t", F32, S)], name="then")
other = graph([node("Identity", ["v"], ["y_e"])], [], [valinfo("y_e", F32, S)], name="else")
save("att23.onnx", graph([node("If", ["cond"], ["y"], then_branch=then, else_branch=other)],
                         [valinfo(n, F32, S) for n in "qkv"] + [valinfo("cond", BOOL, [])], [valinfo("y", F32, S)]), 23)

# unnamed.onnx: opset 12, nodes without names, an If nested in a branch: the nested branch's
# Softmax(axis=0) over [3, 4] flattens before 13, the Elus in both levels are decomposed
def bare(op, ins, outs, **a):
    b = b"".join(ld(1, i.encode()) for i in ins) + b"".join(ld(2, o.encode()) for o in outs) + ld(4, op.encode())
    return b + b"".join(ld(5, attr(k, v)) for k, v in a.items())


inner = graph([bare("Elu", ["x"], ["n_t"]), bare("Softmax", ["x"], ["n_s"], axis=0)], [], [valinfo("n_t", F32, E)])
inner_else = graph([bare("Identity", ["x"], ["n_e"])], [], [valinfo("n_e", F32, E)])
then = graph([bare("If", ["cond"], ["z_t"], then_branch=inner, else_branch=inner_else)], [], [valinfo("z_t", F32, E)])
other = graph([bare("Elu", ["x"], ["z_e"])], [], [valinfo("z_e", F32, E)])
save("unnamed.onnx", graph([bare("If", ["cond"], ["z"], then_branch=then, else_branch=other)],
                           [valinfo("x", F32, E), valinfo("cond", BOOL, [])], [valinfo("z", F32, E)]), 12)
