"""Go's standard base64 decoding (encoding/base64.StdEncoding), with its error offsets.

Python's ``base64.b64decode`` accepts what Go refuses (missing padding, data
after padding) and reports no offset, while Kyverno's ``base64_decode`` and
go-yaml's ``!!binary`` give Go's exact errors; so the decoder is written here,
shared by the encoding functions and the go-yaml reader.
"""

from __future__ import annotations

_SEXTETS = {
    byte: value for value, byte in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}
_PAD = ord("=")
_LINE_BREAKS = (ord("\r"), ord("\n"))


class Base64Error(ValueError):
    """Go's ``illegal base64 data at input byte N``."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")


def _skip_line_breaks(data: bytes, position: int) -> int:
    while position < len(data) and data[position] in _LINE_BREAKS:
        position += 1
    return position


def _quantum_bytes(sextets: list[int]) -> bytes:
    """The 1 to 3 bytes that 2 to 4 sextets carry (left-over bits are ignored, as Go's standard decoder does)."""
    value = 0
    for sextet in sextets:
        value = value << 6 | sextet
    value <<= 6 * (4 - len(sextets))
    return value.to_bytes(3, "big")[: len(sextets) - 1]


def decode_base64(data: bytes) -> bytes:
    """Go's ``base64.StdEncoding.DecodeString``: padded standard alphabet, CR and LF skipped anywhere.

    Raises Base64Error naming the offset Go reports.
    """
    out = bytearray()
    position, size = 0, len(data)
    while True:
        sextets: list[int] = []
        while len(sextets) < 4:
            if position == size:
                if not sextets:
                    return bytes(out)
                raise Base64Error(position - len(sextets))  # a quantum cut short: padding is mandatory
            byte = data[position]
            position += 1
            if byte in _LINE_BREAKS:
                continue
            sextet = _SEXTETS.get(byte)
            if sextet is not None:
                sextets.append(sextet)
                continue
            if byte != _PAD or len(sextets) < 2:
                raise Base64Error(position - 1)
            if len(sextets) == 2:  # a second '=' must follow
                position = _skip_line_breaks(data, position)
                if position == size:
                    raise Base64Error(size)
                if data[position] != _PAD:
                    raise Base64Error(position - 1)
                position += 1
            position = _skip_line_breaks(data, position)
            if position < size:
                raise Base64Error(position)  # nothing may follow the padding
            out += _quantum_bytes(sextets)
            return bytes(out)
        out += _quantum_bytes(sextets)
