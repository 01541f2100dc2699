/**
 * Deploys the test ERC-20 (contracts/TestUSDT.sol) with ethers. Only the sandbox and the tests
 * load this module: it pulls in ethers.
 */
import { Contract, ContractFactory, type ContractRunner, type Signer } from 'ethers';
import { readBuiltTestToken, type TestTokenArtifact } from './test-token-artifact.js';

export interface TestTokenSpec {
  name: string;
  symbol: string;
  decimals: number;
}

export const TEST_USDT: TestTokenSpec = { name: 'Test USDT (development only)', symbol: 'USDT', decimals: 6 };

/** The artifact from `npm run build`, else compiled now (needs the solc devDependency, ~1.5 s). */
export async function testTokenArtifact(): Promise<TestTokenArtifact> {
  const built = readBuiltTestToken();
  if (built) return built;
  const { compileTestToken } = await import('./test-token-compile.js');
  return compileTestToken();
}

/** Deploys one token from `deployer` and returns its address once the deployment is mined. */
export async function deployTestToken(deployer: Signer, spec: TestTokenSpec = TEST_USDT, artifact?: TestTokenArtifact): Promise<string> {
  const a = artifact ?? (await testTokenArtifact());
  const factory = new ContractFactory(a.abi as never, a.bytecode, deployer);
  const contract = await factory.deploy(spec.name, spec.symbol, spec.decimals);
  await contract.waitForDeployment();
  return contract.getAddress();
}

/** The token at `address`, with the calls the sandbox and the tests make. */
export function testTokenAt(address: string, runner: ContractRunner, artifact: TestTokenArtifact): Contract {
  return new Contract(address, artifact.abi as never, runner);
}
