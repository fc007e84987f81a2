-- Makes every run leased by another owner claimable now. Only safe when this process owns the store exclusively.
-- Params: :owner, :now. Returns the number of changed rows through the driver.
UPDATE runs SET lease_expires_at = :now, claim_after = :now
WHERE lease_owner IS NOT NULL AND lease_owner <> :owner AND status IN ('running', 'cancelling')
