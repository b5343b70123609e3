"""Reading a WhatsApp number's verification code out of the message that carries it."""

from __future__ import annotations

from resolvers.resources.whatsapp import CODE_ALPHABET, codes_in, new_code


def test_codes_are_read_as_people_type_them() -> None:
    code = new_code()
    assert len(code) == 9 and code[4] == "-"
    assert set(code.replace("-", "")) <= set(CODE_ALPHABET)
    assert codes_in(code) == [code]
    assert codes_in(f"hi, my code is {code.lower()} thanks") == [code]
    assert codes_in(code.replace("-", " ")) == [code]
    # Letters a code never holds are the digits people mistake them for.
    assert codes_in("7KQ2-M9XO") == ["7KQ2-M9X0"]
    assert codes_in("1LI1-0000") == ["1111-0000"]
    # Not a code: too short, too long, nothing but words.
    assert codes_in("ABC-1234") == []
    assert codes_in("ABCD12345") == []
    assert codes_in("hello there") == []
    # A long text is read only so far, and only a few candidates are tried.
    assert len(codes_in(" ".join(["AAAA-BBBB"] * 100))) == 5
