"""sq.onnx: y = x * x, x and y float [1,4]; two.onnx: y = x * x beside z = x + x (finite where y
overflows). Batches (x) and saved outputs for them, into the current folder: of_*, of2_* overflow
y to +inf at every element, mix_* at one, fin_* nowhere; NAME_in.npz (x), NAME_exp.npz (y),
NAME_io.npz (x, y), NAME_two.npz (y, z), NAME_yonly.npz (y), NAME_iobad.npz (x, y off by 1 at
[0,1]). Used by tests/e2e/judged_outputs.sh and infall.sh."""
import os
import sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gather_pb import f, num, vinfo, node  # vinfo's elem: 1 float
g = f(1, node("Mul", "sq", ["x", "x"], "y")) + f(2, "g") + f(11, vinfo("x", 1, [1, 4])) + f(12, vinfo("y", 1, [1, 4]))
open("sq.onnx", "wb").write(num(1, 8) + f(7, g) + f(8, f(1, "") + num(2, 18)))
# two.onnx: y = x * x beside z = x + x, finite where y overflows
g2 = (f(1, node("Mul", "sq", ["x", "x"], "y")) + f(1, node("Add", "dbl", ["x", "x"], "z")) + f(2, "g") +
      f(11, vinfo("x", 1, [1, 4])) + f(12, vinfo("y", 1, [1, 4])) + f(12, vinfo("z", 1, [1, 4])))
open("two.onnx", "wb").write(num(1, 8) + f(7, g2) + f(8, f(1, "") + num(2, 18)))
np.seterr(over="ignore")
for name, x in (("of", [1e20, -1e20, 3e19, 2e20]), ("of2", [-1e20, 1e21, 3e19, 2e20]), ("mix", [1e20, 2, 3, 4]),
                ("fin", [1, 2, 3, 4])):
    x = np.array([x], np.float32)
    np.savez(name + "_in.npz", x=x)
    np.savez(name + "_exp.npz", y=x * x)
    np.savez(name + "_io.npz", x=x, y=x * x)
    np.savez(name + "_two.npz", y=x * x, z=x + x)
    np.savez(name + "_yonly.npz", y=x * x)
    bad = x * x
    bad[0, 1] += 1
    np.savez(name + "_iobad.npz", x=x, y=bad)
