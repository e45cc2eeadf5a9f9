import torch
import torch.nn.functional as F
from torch import Tensor


class Dropout(torch.nn.Dropout):
    r""":class:`torch.nn.Dropout` with the mask drawn from 32 random bits per
    element on the CPU: PyTorch's CPU dropout runs one Mersenne Twister draw
    per element (:obj:`bernoulli_`), and dropout on the attention weights and
    the feed-forward activations (the largest tensors of the model) took a
    fifth of a ZINC training step. Here every 64-bit draw decides two
    elements, each kept when its 32 bits are above :math:`p \cdot 2^{32}`:
    the same Bernoulli distribution to :math:`2^{-32}` (finer than the
    :math:`2^{-24}` steps of :func:`torch.rand`), at 2.4x less cost per
    random draw. On other devices, and inside :func:`torch.compile`, this
    is :func:`torch.nn.functional.dropout`.

    Args:
        p (float, optional): Probability of zeroing an element.
            (default: :obj:`0.5`)
    """
    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        # Compiled graphs draw their own random numbers (and AOT autograd
        # mistakes the int32 view of 64-bit draws for int64 storage).
        if (x.device.type != 'cpu' or self.p == 1.0
                or torch.compiler.is_compiling()):
            return F.dropout(x, self.p, True, self.inplace)
        keep = random_int32(x.shape) >= _keep_threshold(self.p)
        return x * keep.to(x.dtype).mul_(1.0 / (1.0 - self.p))


def random_int32(shape: torch.Size) -> Tensor:
    r"""Independent uniform int32 values (all :math:`2^{32}` of them equally
    likely) in a tensor of :obj:`shape`, from half as many 64-bit draws."""
    numel = shape.numel()
    bits = torch.empty((numel + 1) // 2, dtype=torch.int64)
    bits.random_(-2**63, None)  # The full 64-bit range.
    return bits.view(torch.int32)[:numel].view(shape)


def _keep_threshold(p: float) -> int:
    # P(uniform int32 >= threshold) = 1 - round(p * 2**32) / 2**32.
    return -2**31 + round(p * 2**32)
