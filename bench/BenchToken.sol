// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// Bench only (bench/watch.mjs): the Transfer events of an ERC-20, many per transaction, and no
/// balances. A real token (contracts/TestUSDT.sol) writes a new storage slot for every new
/// recipient, and anvil slows down with every block as that state grows (a 2,000-block chain of
/// 200,000 distinct recipients took minutes). The watcher reads only the logs, which are the
/// same bytes a real token's transfers produce.
contract BenchToken {
    event Transfer(address indexed from, address indexed to, uint256 value);

    function transferBatch(address[] calldata to, uint256 value) external {
        for (uint256 i = 0; i < to.length; i++) {
            emit Transfer(msg.sender, to[i], value);
        }
    }

    function transfer(address to, uint256 value) external returns (bool) {
        emit Transfer(msg.sender, to, value);
        return true;
    }
}
